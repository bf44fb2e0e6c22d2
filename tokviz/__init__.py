"""tokviz: see how tokenizers work.

Layers, imports pointing downward only: ``app`` -> ``panels`` -> ``engine`` -> ``core``.
``tokviz.core`` is pure Python + numpy + regex and never imports Qt.

Importing tokviz before numpy (as every tokviz command and child process does) asks numpy's
OpenBLAS to let its idle threads sleep at once (``OPENBLAS_THREAD_TIMEOUT=4``) unless the
environment says otherwise: by default each thread spins for about 2**28 cycles after numpy's import
and after every BLAS call, a tenth of a second of a core per process for nothing (a launch of the
window: 0.62 -> 0.51 s of CPU). BLAS work itself (embedding training) runs on as many threads, as
fast.
"""

import os as _os

_os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

__version__ = "0.1.0"
