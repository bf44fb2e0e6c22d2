"""A large text measures its longest line when it is made (on the loader's thread), so the view
that shows it does not scan it on the GUI thread."""

from __future__ import annotations

from tokviz.engine.large_text import LargeText


def test_the_longest_line_is_known_once_the_text_is_made():
    text = "short\n" + "x" * 300 + "\nmid line\n"
    assert LargeText.from_text(text).longest_line_sampled == 300
    assert LargeText([]).longest_line_sampled == 0


def test_a_sampled_longest_line_is_one_of_the_lines():
    lines = [f"{'y' * (i % 97)}" for i in range(50_000)]
    large = LargeText.from_text("\n".join(lines))
    assert large.longest_line_sampled in {len(s) for s in lines}
    assert large.longest_line_sampled == max(large.line_lengths_sample(2000))
