from django.urls import path

from examples.django_app.jobs import views

urlpatterns = [
    path("invoices/<int:number>/send", views.send_invoice),
    path("jobs/<str:job_id>", views.job_status),
]
