"""The owner's dashboard (dashboard/): its pages, through the test client and in Chromium."""
