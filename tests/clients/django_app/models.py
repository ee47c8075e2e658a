from django.db import models
from hlculid.django import HlculidField, HlculidGenerate


class Event(models.Model):
    id = HlculidField(primary_key=True, db_default=HlculidGenerate())
    n = models.IntegerField()

    class Meta:
        app_label = "django_app"
