"""The hostile suite across doors: every way in that should be shut, and what reads may show.
(The hostile inputs of one door sit beside that door's tests.)"""
