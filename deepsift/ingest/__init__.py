"""Loading, chunking and storing documents."""
