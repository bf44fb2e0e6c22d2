"""Qt engines (QtCore only, no widgets): background work, item models, shared state, settings.

Shared state: `step_model` (the current timeline and step) and `workspace` (the corpus and the
current text). Background work: `workers` (the worker/engine pair, newest run wins), `tasks` (one
function at a time on a thread; `ChildWorkerMixin` for a worker whose job runs in a child process),
`training/` (training runs in a thread or a child process), `heatmaps/` (heatmaps and embedding
training), `token_view/` (the token view's encoder). Item models: `tables/` (merges, vocabulary,
glitch findings). Files and text: `corpus_files`, `large_text`, `samples`. Preferences: `settings`
(every QSettings key).

May import tokviz.core and QtCore; never widgets, tokviz.panels or tokviz.app.
"""
