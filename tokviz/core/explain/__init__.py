"""Explaining any tokenizer, trained or loaded, through what it declares it can do.

`tokens`: the merge timeline (`merge_list`), merge trees, tokens no text reaches (`find_unreachable`)
or the corpus never uses (`find_unused`), glitch-token candidates; `unigram`: a Unigram model's
lattice, its n best segmentations and samples; `vocab_view`: filtered, sorted views of a
vocabulary; `loaded_timeline`: a loaded tokenizer dressed as a timeline, so every view that replays
step k shows it too. Each asks the tokenizer (`merge_list`, `unreachable`, `lattice_view`, ...:
`tokviz.core.algorithm.protocol`) instead of testing its class.
"""
