"""The Unigram lattice of a word, drawn (`LatticePanel`)."""
