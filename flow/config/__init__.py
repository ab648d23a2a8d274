"""Config service: stores flow blueprints and running flows, and tells processors about them."""
