"""SuperBPE (Liu et al. 2025): BPE in two stages, subwords first, then superwords across spaces."""
