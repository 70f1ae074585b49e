{%- materialization incremental, adapter='spark', supported_languages=['sql', 'python'] -%}
  {#- dbt-spark's `incremental` materialization, unchanged, for every model, except that a
      per-batch model with nothing to write for this run's batch is not run. A model opts in
      with `meta: {qrepl_skip_when: ...}`:
        batch_is_empty      the batch has no command in int_batch_commands (macro
                            qrepl_batch_is_empty): the models downstream of the cut.
        nothing_new_queued  nothing was appended to the queue since the snapshot the last batch
                            read (macro qrepl_nothing_new_queued): the cut,
                            int_batch_subscriptions and int_batch_commands.
        no_rows_for_batch   the batch is empty, or none of its rows in the model's source
                            (meta.qrepl_rows_from) meets the model's condition
                            (meta.qrepl_rows_where): a mart such as queue_rejects, which most
                            batches give no row (macro qrepl_batch_has_rows).
      In each case the model would insert no row. Not running it spares its statements and its
      Iceberg commit (an empty append still makes a snapshot), so a run with nothing queued
      reads a little metadata instead of passing over the whole DAG. Only while `dbt run` /
      `dbt build` executes, and only once the table exists (the first run creates every
      table). A skipped model's pre-hooks, which prepare or apply its batch, are not run; its
      post-hooks (housekeeping, such as the conflicts' retention purge) are. dbt reports it as
      OK, "NOTHING TO WRITE".
      A run with nothing to do at all (macro qrepl_run_is_idle) runs none of qrepl's own
      models, queue_reader_history included, nor their hooks: "NOTHING TO DO". -#}
  {%- set skip_when = (config.get('meta') or {}).get('qrepl_skip_when') -%}
  {%- if skip_when not in [none, 'batch_is_empty', 'nothing_new_queued', 'no_rows_for_batch'] -%}
    {{ exceptions.raise_compiler_error("qrepl: meta.qrepl_skip_when must be 'batch_is_empty', 'nothing_new_queued' or 'no_rows_for_batch', got '" ~ skip_when ~ "'") }}
  {%- endif -%}
  {%- set skip = false -%}
  {%- set idle = model.package_name == 'qrepl' and qrepl_run_is_idle() and load_relation(this) is not none -%}
  {%- if idle -%}
    {#- a run with nothing to do (qrepl_run_is_idle) writes no table of the reader's, not even
        queue_reader_history; its post-hooks have nothing to do either -#}
    {%- call noop_statement('main', 'NOTHING TO DO') -%}
      -- a run with nothing to do (docs/spec.md 5.10): this model was not run
    {%- endcall -%}
    {{ return({'relations': [this]}) }}
  {%- elif skip_when == 'nothing_new_queued' and qrepl_is_running() -%}
    {#- the question first: int_batch_subscriptions, the first to ask, then fixes the queue's
        snapshot before it copies the subscriptions, on the first run too -#}
    {%- set skip = qrepl_nothing_new_queued() and load_relation(this) is not none -%}
  {%- elif skip_when is not none and qrepl_is_running() -%}
    {#- the table first: the run that creates it asks nothing -#}
    {%- set skip = load_relation(this) is not none and (qrepl_batch_is_empty()
        or (skip_when == 'no_rows_for_batch' and not qrepl_batch_has_rows(model.name))) -%}
  {%- endif -%}
  {%- if not skip -%}
    {{ return(dbt.materialization_incremental_spark()) }}
  {%- endif -%}
  {#- for queue_reader_history.decisions (macro qrepl_run_decisions), which runs after every
      model that can be skipped -#}
  {%- do qrepl_run_state('models_skipped', []).append(model.name) -%}
  {{ run_hooks(post_hooks) }}
  {%- call noop_statement('main', 'NOTHING TO WRITE') -%}
    -- batch {{ qrepl_batch_id() }}: {{ skip_when | replace('_', ' ') }}, so this model was not run
  {%- endcall -%}
  {{ return({'relations': [this]}) }}
{%- endmaterialization -%}

