"""Librarian: documents and answers per user and collection, and sending documents into flows."""
