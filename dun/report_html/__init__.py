"""`dun report`: the plots of the last runs in one self-contained HTML file. `series` gathers the
numbers from the history, `figures` draws them with plotly, `page` writes the file."""
