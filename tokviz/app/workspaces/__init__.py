"""The window's workspaces: the layout table (`layouts`), applying and keeping layouts (`ops`), and
the first-run screen's three paths into them (`welcome`)."""
