"""The command line's verbs: `options.py` declares the options several of them take."""
