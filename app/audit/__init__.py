"""The build audit (pure): what a program's bytes say about how it was built, read without
running it: the ELF reader, the instruction scans of arm64 and x86-64 code, and the
findings in plain words, crossed with a platform's fitness."""
