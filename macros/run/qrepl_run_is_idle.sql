{% macro qrepl_run_is_idle() %}
    {#- True when this run has nothing to do, asked once at on-run-start before the run lock
        (qrepl_run_cache): a queue reader scheduled every few minutes mostly finds the queue as
        the last batch left it. Such a run takes no lock, runs no trigger and writes nothing,
        not even its history row (docs/reliability.md, step 5); it reads a little metadata.
        Idle when all of these hold, read in this order and the first that fails ends the asking:
          * no run lock is held (a held one still fails the run at once, naming its holder);
          * the reader's tables exist (the first run creates them);
          * nothing was appended to the queue since the snapshot the last batch read
            (macro qrepl_queue_position: 'never appended' or 'nothing new');
          * no batch is unfinished: int_batch_subscriptions and int_batch_commands hold no batch
            later than the last one in queue_reader_history (a run that crashed after its cut
            is finished by the next, as ever);
          * no conflict is past the publication's retention (purge_expired_conflicts).
        A writer's commit to a publisher table since the last stamp does not make a run a
        batch: the trigger stamps before anything compares versions (the next batch's run,
        distribution, an immediate commit), and a write it has not stamped yet is met as
        surely then (docs/spec.md 5.10).
        Its reads are not kept for the run: a run that is not idle reads the queue position
        and the batch id again once it holds the lock, as before. Skipping is safe whatever
        happens meanwhile, since an idle run writes nothing. False outside `dbt run` /
        `dbt build` of a reader model.
        Decides docs/spec.md 5.10 (A run with nothing to do). -#}
    {%- if not (qrepl_is_running() and qrepl_reader_selected()) -%}
        {{ return(false) }}
    {%- endif -%}
    {{ return(qrepl_run_cache('run_is_idle', _qrepl_run_is_idle_read)) }}
{% endmacro %}


{% macro _qrepl_run_is_idle_read() %}
    {#- qrepl_run_is_idle's reads; the answer is logged in one line when it is idle. -#}
    {%- if _qrepl_run_lock_holder() is not none -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set tables = {} -%}
    {%- for name in ['queue_reader_history', 'int_batch_subscriptions', 'int_batch_commands', 'conflicts'] -%}
        {%- set relation = qrepl_relation(name) -%}
        {%- if not qrepl_relation_exists(relation) -%}
            {{ return(false) }}
        {%- endif -%}
        {%- do tables.update({name: relation}) -%}
    {%- endfor -%}
    {%- set position = _qrepl_queue_position_read() -%}
    {%- if position.read not in ('never appended', 'nothing new') -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set batches = run_query('select (select coalesce(max(batch_id), 0) from ' ~ tables.queue_reader_history
        ~ '), (select coalesce(max(batch_id), 0) from ' ~ tables.int_batch_subscriptions
        ~ '), (select coalesce(max(batch_id), 0) from ' ~ tables.int_batch_commands ~ ')').rows[0] -%}
    {%- set finished = batches[0] | int -%}
    {%- if (batches[1] | int) > finished or (batches[2] | int) > finished -%}
        {{ return(false) }}
    {%- endif -%}
    {%- if qrepl_conflicts_to_purge(tables.conflicts) -%}
        {{ return(false) }}
    {%- endif -%}
    {#- idle: what the skipped models still ask while dbt compiles them is known now (the
        keys of qrepl_queue_position, qrepl_batch_id and qrepl_batch_followers), and nothing
        this run does can change it -#}
    {%- do _qrepl_run_values().update({'queue_position': position, 'batch_id': finished + 1, 'batch_followers': 0}) -%}
    {{ log("qrepl: nothing to do since batch " ~ finished ~ " (nothing queued since, no batch unfinished, no conflict past "
        ~ "its retention): this run takes no lock and writes nothing", info=true) }}
    {{ return(true) }}
{% endmacro %}
