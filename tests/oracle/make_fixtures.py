#!/usr/bin/env python3
"""Writes scikit-learn's results on a small fixed count matrix to fixtures.json, so the Rust
tests (tests/models_oracle.rs) can compare spamsort's models with the reference implementation
without needing Python. Re-run after changing the matrix: python3 tests/oracle/make_fixtures.py
"""
import json
import os

import numpy as np
import sklearn
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import BernoulliNB, MultinomialNB
from sklearn.svm import LinearSVC

rng = np.random.default_rng(20261122)
n_rows, n_features = 60, 15
y = np.array([1 if i % 3 == 0 else 0 for i in range(n_rows)])  # 1 = spam
# Sparse counts whose rates differ by class, so the models have something to learn.
rates = np.where(y[:, None] == 1, np.linspace(0.1, 1.2, n_features), np.linspace(1.2, 0.1, n_features))
X = rng.poisson(rates * (rng.random((n_rows, n_features)) < 0.5))
X[0, :] = 0  # an empty message
X[:, 7] = 0  # a feature never seen in training
X[1, 7] = 0

C = 0.5
out = {
    "sklearn_version": sklearn.__version__,
    "X": X.tolist(),
    "y": y.tolist(),
    "C": C,
}
bnb = BernoulliNB(alpha=1.0).fit(X, y)
out["bernoulli_jll"] = bnb.predict_joint_log_proba(X).tolist()
mnb = MultinomialNB(alpha=1.0).fit(X, y)
out["multinomial_jll"] = mnb.predict_joint_log_proba(X).tolist()
lr = LogisticRegression(C=C, tol=1e-12, max_iter=100000, solver="lbfgs").fit(X, y)
out["logistic_coef"] = lr.coef_[0].tolist()
out["logistic_intercept"] = float(lr.intercept_[0])
svc = LinearSVC(C=C, loss="hinge", dual=True, tol=1e-10, max_iter=10_000_000, intercept_scaling=1.0).fit(X, y)
out["svc_decision"] = svc.decision_function(X).tolist()

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures.json")
with open(path, "w") as f:
    json.dump(out, f)
print(f"wrote {path} (scikit-learn {sklearn.__version__})")
