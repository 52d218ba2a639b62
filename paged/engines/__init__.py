"""Real serving engines beside the course: adapters that return the course's own result shapes."""
