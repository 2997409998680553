"""Ablation's routes: failure attribution of a stored trace."""

from __future__ import annotations

from fastapi import APIRouter

from ._attribution._api import router as attribution_router

router = APIRouter()
router.include_router(attribution_router)
