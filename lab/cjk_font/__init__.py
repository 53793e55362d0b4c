"""lab's CJK font subset and its licence, as package data (lab.fonts registers the font; `make cjk-font` rebuilds it)."""
