"""Layer interfaces: the command line and its text helpers."""
