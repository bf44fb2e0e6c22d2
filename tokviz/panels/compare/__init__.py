"""The Compare panel: tokenizer efficiency metrics side by side, per document and per script
(`panel`), and the premiums bar chart (`chart`). May import core, engine and the panels' shared
widgets; never tokviz.app."""
