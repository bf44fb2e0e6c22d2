"""Work in other processes, started one way or the other, talking one protocol.

- `pipes`: whole buffers and length-prefixed pickles ("frames") on raw pipe descriptors, and
  events (a frame plus an optional numpy array) on top of them: the one wire format.
- `fork`: `fork_call`/`fork_map`, forked children that inherit what is loaded (a tokenizer, a
  corpus) and send back one frame; `fork_server`, one answering requests one by one; `can_fork`
  says where forking is safe; `fork_safe_thread` starts the only kind of helper thread that
  leaves it safe.
- `spawn`: `ChildProcess`, an isolated fresh interpreter (``python -I``) for the window's long
  jobs (training, embeddings), and the child-side helpers of that protocol.
- `halves`: a big text encoded in two processes (built on `fork_call`).
- `parallel`: how many processes a job may use, chosen at the top (`choose_processes`) and
  passed down to core calls as ``processes`` (1 by default); `usable` is what a call may fork here.

Pure Python + numpy, no Qt: child processes import this package. May import core's errors only.
"""
