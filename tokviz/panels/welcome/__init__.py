"""The first-run screen: three ways to start (train on a sample, open a real tokenizer, start a lesson)."""
