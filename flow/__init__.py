"""The processors, one module or small package each; they share only schemas and topics."""
