{% macro qrepl_run_decisions() %}
    {#- What this run decided at run time, as one JSON object: queue_reader_history writes it in
        its `decisions` column, so every run's choices can be queried (docs/architecture.md,
        "Run-time decisions"); none outside `dbt run` / `dbt build`. The answers are the ones the nodes of this run acted on (each
        is read once per run: macro qrepl_run_cache); a run with nothing queued asks nothing
        more for it.
          queue_read           'never appended', 'nothing new', 'appends since snapshot' (an
                               Iceberg changelog from since_snapshot_id) or 'whole queue', each
                               as of queue_snapshot_id (macro qrepl_queue_position)
          batch_empty          the batch has no command: every per-batch model is skipped
          followers            candidates that follow another on their publisher row
                               (qrepl_batch_followers); 0 is an uncoupled batch
          resolution           how the batch was resolved (macro qrepl_resolution):
                               'every live transaction applied' (subscriber_wins), 'pass 0'
                               (uncoupled), 'pass 0 then fold' (coupled, few followers),
                               'passes 0-2 then fold'
          articles_merged      the articles batch_applied MERGEs (qrepl_batch_writes)
          subscriptions_written whether it writes reinit_pending into subscriptions
          models_skipped       the models this run did not run (meta qrepl_skip_when): after
                               the cut when the batch is empty, and a mart with no row for
                               the batch (qrepl_batch_has_rows), as the incremental
                               materialization recorded them -#}
    {%- if not qrepl_is_running() -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set position = qrepl_queue_position() -%}
    {%- set nothing_new = qrepl_nothing_new_queued() -%}
    {%- set empty = nothing_new or qrepl_batch_is_empty() -%}
    {#- recorded by the incremental materialization as it skipped each model: this model
        runs after all of them. Not re-asked here: on the run that creates a table the model
        runs whatever the answer -#}
    {%- set skipped = qrepl_run_state('models_skipped', []) | sort -%}
    {%- set decisions = {
        'queue_read': position.read,
        'queue_snapshot_id': position.snapshot,
        'since_snapshot_id': position.since,
        'batch_empty': empty,
        'models_skipped': skipped,
    } -%}
    {%- if not empty -%}
        {%- set writes = qrepl_batch_writes() -%}
        {%- do decisions.update({
            'followers': qrepl_batch_followers() | int,
            'resolution': qrepl_resolution().steps,
            'articles_merged': writes.articles | sort,
            'subscriptions_written': writes.reinit,
        }) -%}
    {%- endif -%}
    {{ return(decisions) }}
{% endmacro %}


{% macro qrepl_run_decisions_sql() %}
    {#- qrepl_run_decisions as a SQL string literal (its text holds only names checked as
        identifiers, numbers, booleans and the fixed words above); null outside a run. -#}
    {%- set decisions = qrepl_run_decisions() -%}
    {%- if decisions is none -%}
        {{ return('cast(null as string)') }}
    {%- endif -%}
    {%- set text = tojson(decisions, sort_keys=true) -%}
    {{ return("'" ~ text | replace('\\', '\\\\') | replace("'", "\\'") ~ "'") }}
{% endmacro %}
