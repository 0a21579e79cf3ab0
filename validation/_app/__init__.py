"""validation.app — the application: the validation report (:mod:`.report`) and the command line
(:mod:`.cli`, installed as ``linattn``). It only wires experiments and figures together."""
