"""Readers the check types share: coverage data of every format, markdown checkboxes and headings."""

# Boxes under headings starting with these words do not block (the `checkboxes` default, and the markdown reader's):
# here, so that declaring the check type does not load the reader.
DEFAULT_OPTIONAL_HEADINGS: tuple[str, ...] = ("Optional", "Future", "Nice to Have")
