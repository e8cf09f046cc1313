"""Built-in check types, one module each; every module is an ordinary dun plugin."""
