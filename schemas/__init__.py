"""The message contract: pydantic v2 models that cross process boundaries. No I/O, no project imports."""
