"""TraceGraph: message-flow processors for explainable question answering over knowledge graphs."""

__version__ = "0.1.0"
