"""tokviz: see how tokenizers work.

Layers, imports pointing downward only: ``app`` -> ``panels`` -> ``engine`` -> ``core``.
``tokviz.core`` is pure Python + numpy + regex and never imports Qt.
"""

__version__ = "0.1.0"
