"""The applications, the top layer: the ``scopa`` command (:mod:`scopa_app.cli`), the terminal
game (:mod:`scopa_app.play`), the web game (:mod:`scopa_app.web`) and the evaluation and
tournament commands (:mod:`scopa_app.evaluate`). Nothing below imports from here.
"""
