"""Streamlit widgets: `render_<thing>(data, *, key) -> action | None`, plain models in, the user's action out."""
