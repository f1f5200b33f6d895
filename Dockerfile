# One image for web, worker and beat (they differ only in `command`, see docker-compose.yml).
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
WORKDIR /app
RUN pip install --no-cache-dir torch==2.13.0
COPY pyproject.toml README.md ./
COPY memory_project ./memory_project
COPY memories ./memories
COPY retrieval ./retrieval
COPY graphs ./graphs
COPY dashboard ./dashboard
RUN pip install --no-cache-dir .
COPY . .
# static files for WhiteNoise (settings.production), collected once into the image
RUN DJANGO_SETTINGS_MODULE=memory_project.settings.base ANAMNESIS_DB_AUTOSTART=0 \
    python manage.py collectstatic --noinput --verbosity 0
RUN useradd --create-home anamnesis && chown -R anamnesis /app
USER anamnesis
EXPOSE 8000
CMD ["uvicorn", "memory_project.asgi:application", "--host", "0.0.0.0", "--port", "8000"]
