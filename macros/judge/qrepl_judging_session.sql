{% macro qrepl_judging_session() %}
    {#- The judging's pre-hook: room for Spark's analyzer. The judging's one statement holds
        the processing positions (int_batch_transactions), the candidates, the resolution's
        passes and its fold, all ephemeral; the plan of a coupled batch needs more than the
        100 fixed-point iterations Spark's analyzer allows by default ("Max iterations (100)
        reached for batch Resolution"). Set in the session the judging runs in, so a cluster
        or Thrift server of the user's needs no setting of its own; an iteration past the
        plan's fixed point is never run, so a plan that needs fewer costs nothing more. -#}
    set spark.sql.analyzer.maxIterations = 1000
{% endmacro %}
