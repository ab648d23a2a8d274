"""RAPTOR summary trees (RSN-05): passages clustered recursively, each node summarising its children."""
