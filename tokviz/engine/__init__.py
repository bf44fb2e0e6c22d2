"""Qt engines (QtCore only, no widgets): background work, item models, shared state, settings.

Modules: `workers` (thread lifecycle: worker/engine pair, newest run wins), `training` (training
runs, in a thread or a child process), `training_child` (the training event stream; no Qt),
`child_process` (both sides of a child process's pipes; no Qt),
`tasks` (one-off background jobs such as loading files), `corpus_files` and `large_text` (reading
files and statistics in slices; no Qt), `step_model` (current timeline and step), `vocab_model`
(vocabulary table), `settings` (every QSettings key), `samples` (built-in corpora), `display` (how
tokens are printed).
"""
