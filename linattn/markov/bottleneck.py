"""linattn.markov.bottleneck — how much the pooled bigram embedding of a sequence says about which chain of the
pool generated it, and the pool size ``K₂*`` beyond which it can no longer tell them apart (Gibson, Cui & Reddy,
arXiv:2604.12151).

Embeddings: :func:`one_hot_embedding`, :func:`random_projection`, :func:`unigram_embedding`,
:func:`reduced_embedding`, :func:`pooled_embedding`, :func:`bigram_laws`; the information ``I(k; m)`` in bits
(:func:`information`, :class:`Information`; averaged over pools: :func:`information_mean`, :class:`InformationMean`);
the pool size ``K₂*`` (:func:`k2`, :class:`K2`); the prior moments of the bigram laws (:func:`prior_moments`,
:class:`PriorMoments`). Its theory, the Gaussian channel, is :func:`replica.k2_theory`. See
``docs/markov_bottleneck.md``.
"""
from ._bottleneck import (
    K2,
    Information,
    InformationMean,
    PriorMoments,
    bigram_laws,
    information,
    information_mean,
    k2,
    one_hot_embedding,
    pooled_embedding,
    prior_moments,
    random_projection,
    reduced_embedding,
    unigram_embedding,
)

__all__ = ["one_hot_embedding", "random_projection", "unigram_embedding", "reduced_embedding", "pooled_embedding",
           "bigram_laws", "information", "Information", "information_mean", "InformationMean", "k2", "K2",
           "prior_moments", "PriorMoments"]
