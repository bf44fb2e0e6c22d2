"""``python -m tokviz``: the same as the ``tokviz`` command."""

from tokviz.app.cli.entry import run

if __name__ == "__main__":
    run()
