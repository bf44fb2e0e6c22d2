"""Training in the background: `TrainingEngine`/`TrainingWorker` on a thread or in a child process
(`child` is the child's side of the pipe and imports no Qt).

Engine layer: QtCore and tokviz.core only.
"""
