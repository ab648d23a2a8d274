"""The ReAct agent: think / act / observe with configured tools, explained in PROV-O."""
