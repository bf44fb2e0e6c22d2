"""The application: the main window that assembles models, engines, panels and docks (`main_window`,
`docks`, `actions`), the controllers behind its menus (`*_ops`, given their dependencies and
`services.WindowServices`, never the window), the command line (`cli/`), the classroom (`classroom/`:
presenter, lessons, animation export) and ``tokviz screenshot`` (`screenshots/`).

Wires things together and owns no logic; may import everything below it.
"""
