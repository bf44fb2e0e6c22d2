"""Evidence of glitch tokens from a model's weights: its embedding matrices, read from safetensors.

`safetensors` reads a file's header and slices of a tensor's rows (checked, memory-mapped, never
unpickled); `tensors` finds the embedding and unembedding matrices in a file, a folder or a sharded
model's index; `indicators` computes Magikarp's under-training indicators a slice at a time;
`combine` puts them beside the vocabulary-only glitch score; `neighbours` finds a token's nearest
rows. What this leaves out: the vocabulary-only evidence (`tokviz.core.glitch`).
"""

from .combine import WeightColumns, average_ranks, combined_ranks
from .indicators import WeightEvidence, parse_id_ranges, reference_ids, weight_evidence
from .neighbours import NeighbourMap, neighbour_map
from .safetensors import SafetensorsFile, TensorInfo, WeightsError
from .tensors import Matrix, ModelWeights, open_weights

__all__ = ["Matrix", "ModelWeights", "NeighbourMap", "SafetensorsFile", "TensorInfo", "WeightColumns", "WeightEvidence",
           "WeightsError", "average_ranks", "combined_ranks", "neighbour_map", "open_weights", "parse_id_ranges",
           "reference_ids", "weight_evidence"]
