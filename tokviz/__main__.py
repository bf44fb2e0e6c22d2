"""``python -m tokviz``: the same as the ``tokviz`` command."""

from tokviz.app.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
