"""Settings for the recipe's app, configured in code against the test's server (no settings
module in the environment): configure(host=socket dir, port, dbname, migrations module)."""

import django
from django.conf import settings


def configure(host, port, dbname, migrations_module):
    settings.configure(
        DEBUG=False,
        SECRET_KEY="hlculid-test-only",
        ALLOWED_HOSTS=["testserver"],
        USE_TZ=True,
        DATABASES={"default": {"ENGINE": "django.db.backends.postgresql", "HOST": host, "PORT": port,
                               "USER": "postgres", "NAME": dbname}},
        INSTALLED_APPS=["django.contrib.admin", "django.contrib.auth", "django.contrib.contenttypes",
                        "django.contrib.sessions", "django.contrib.messages", "django_app"],
        MIGRATION_MODULES={"django_app": migrations_module},
        MIDDLEWARE=["django.contrib.sessions.middleware.SessionMiddleware",
                    "django.middleware.common.CommonMiddleware",
                    "django.middleware.csrf.CsrfViewMiddleware",
                    "django.contrib.auth.middleware.AuthenticationMiddleware",
                    "django.contrib.messages.middleware.MessageMiddleware"],
        ROOT_URLCONF="django_app.urls",
        TEMPLATES=[{"BACKEND": "django.template.backends.django.DjangoTemplates", "APP_DIRS": True,
                    "OPTIONS": {"context_processors": ["django.template.context_processors.request",
                                                       "django.contrib.auth.context_processors.auth",
                                                       "django.contrib.messages.context_processors.messages"]}}],
        PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],  # fast, for a test user
        DEFAULT_AUTO_FIELD="django.db.models.AutoField",
    )
    django.setup()
