"""``python -m tokviz``: the same as the ``tokviz`` command."""

from tokviz.app.cli import main

raise SystemExit(main())
