"""A minimal Django app for tests/clients/test_django.py: one model keyed by an hlculid with the
server default, registered in the admin. Its migrations are made by the test, into a temporary
directory (settings.configure(..., MIGRATION_MODULES=...))."""
