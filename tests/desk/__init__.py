"""The owner's desk (review/): the ceremonies, the queue, its pages, through the test client and in
Chromium."""
