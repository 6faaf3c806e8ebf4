from __future__ import annotations

from django.http import Http404, HttpRequest, JsonResponse
from django.views.decorators.http import require_GET, require_POST

from .queue import queue


@require_POST
def send_invoice(request: HttpRequest, number: int) -> JsonResponse:
    job = queue().enqueue("invoice.send", {"number": number}, unique_key=f"invoice-{number}")
    return JsonResponse({"job": job.id, "status": job.status.value}, status=202)


@require_GET
def job_status(request: HttpRequest, job_id: str) -> JsonResponse:
    job = queue().get_job(job_id)
    if job is None:
        raise Http404(job_id)
    return JsonResponse({"status": job.status.value, "result": job.result})
