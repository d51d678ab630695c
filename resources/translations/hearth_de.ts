<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de" sourcelanguage="en">
<context>
    <name></name>
    <message>
        <source>On this computer</source>
        <translation>Auf diesem Computer</translation>
    </message>
    <message>
        <source>Fits on the GPU</source>
        <translation>Passt auf die GPU</translation>
    </message>
    <message>
        <source>Partly on the GPU</source>
        <translation>Teilweise auf der GPU</translation>
    </message>
    <message>
        <source>Choose a model</source>
        <translation>Modell auswählen</translation>
    </message>
    <message>
        <source>Search models</source>
        <translation>Modelle durchsuchen</translation>
    </message>
    <message>
        <source>Models</source>
        <translation>Modelle</translation>
    </message>
    <message>
        <source>Get more models</source>
        <translation>Weitere Modelle holen</translation>
    </message>
    <message>
        <source>No models match “{query}”.</source>
        <translation>Keine Modelle passen zu „{query}“.</translation>
    </message>
    <message>
        <source>No models yet. Open a GGUF file or get one.</source>
        <translation>Noch keine Modelle. Öffnen Sie eine GGUF-Datei oder laden Sie eine herunter.</translation>
    </message>
    <message>
        <source>{size} GiB</source>
        <translation>{size} GiB</translation>
    </message>
    <message>
        <source>{size} MiB</source>
        <translation>{size} MiB</translation>
    </message>
    <message>
        <source>{size} B</source>
        <translation>{size} B</translation>
    </message>
    <message>
        <source>{used} bytes used by other apps
{free} bytes free
{total} bytes in total</source>
        <translation>{used} Bytes von anderen Apps belegt
{free} Bytes frei
{total} Bytes insgesamt</translation>
    </message>
    <message>
        <source>memory unknown</source>
        <translation>Speicher unbekannt</translation>
    </message>
    <message>
        <source>{used} used by other apps · {free} free of {total}</source>
        <translation>{used} von anderen Apps belegt · {free} von {total} frei</translation>
    </message>
    <message>
        <source>{free} free</source>
        <translation>{free} frei</translation>
    </message>
    <message>
        <source>of {total}</source>
        <translation>von {total}</translation>
    </message>
    <message>
        <source>Used by other programs: {used}</source>
        <translation>Von anderen Programmen belegt: {used}</translation>
    </message>
    <message>
        <source>Free</source>
        <translation>Frei</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>Aktualisieren</translation>
    </message>
    <message>
        <source>Detect the hardware again (memory use changes as apps run)</source>
        <translation>Hardware erneut erkennen (die Speicherbelegung ändert sich, während Apps laufen)</translation>
    </message>
    <message>
        <source>Hardware</source>
        <translation>Hardware</translation>
    </message>
    <message>
        <source>What this computer has, and what Hearth&apos;s runtime can use of it.</source>
        <translation>Was dieser Computer hat und was die Laufzeitumgebung von Hearth davon nutzen kann.</translation>
    </message>
    <message>
        <source>Press Refresh to detect this computer&apos;s hardware.</source>
        <translation>Drücken Sie „Aktualisieren“, um die Hardware dieses Computers zu erkennen.</translation>
    </message>
    <message>
        <source>{source}: {reason}</source>
        <translation>{source}: {reason}</translation>
    </message>
    <message>
        <source>Not found</source>
        <translation>Nicht gefunden</translation>
    </message>
    <message>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <source>{cores} cores, {threads} threads</source>
        <translation>{cores} Kerne, {threads} Threads</translation>
    </message>
    <message>
        <source>{cores} ({performance} performance cores)</source>
        <translation>{cores} ({performance} Performance-Kerne)</translation>
    </message>
    <message>
        <source>{arch} · {cores}</source>
        <translation>{arch} · {cores}</translation>
    </message>
    <message>
        <source>{os} · kernel {kernel}</source>
        <translation>{os} · Kernel {kernel}</translation>
    </message>
    <message>
        <source>no SIMD features detected</source>
        <translation>keine SIMD-Erweiterungen erkannt</translation>
    </message>
    <message>
        <source>Instruction sets: {features}</source>
        <translation>Befehlssätze: {features}</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>Speicher</translation>
    </message>
    <message>
        <source>System RAM: where a model&apos;s layers go when they are not on a GPU</source>
        <translation>System-RAM: Hier liegen die Schichten eines Modells, die nicht auf einer GPU sind</translation>
    </message>
    <message>
        <source>Swap: {free} free of {total}</source>
        <translation>Auslagerungsspeicher: {free} von {total} frei</translation>
    </message>
    <message>
        <source>No swap</source>
        <translation>Kein Auslagerungsspeicher</translation>
    </message>
    <message>
        <source>None found</source>
        <translation>Keine gefunden</translation>
    </message>
    <message>
        <source>No GPU found: models will run on the CPU.</source>
        <translation>Keine GPU gefunden: Modelle laufen auf der CPU.</translation>
    </message>
    <message>
        <source>Runtime</source>
        <translation>Laufzeitumgebung</translation>
    </message>
    <message>
        <source>llama.cpp, which runs the models</source>
        <translation>llama.cpp, das die Modelle ausführt</translation>
    </message>
    <message>
        <source>Not asked yet</source>
        <translation>Noch nicht abgefragt</translation>
    </message>
    <message>
        <source>Which of these devices the runtime can use is not known yet: it is asked after the hardware is detected.</source>
        <translation>Welche dieser Geräte die Laufzeitumgebung nutzen kann, ist noch nicht bekannt: Das wird abgefragt, nachdem die Hardware erkannt wurde.</translation>
    </message>
    <message>
        <source>GPU acceleration</source>
        <translation>GPU-Beschleunigung</translation>
    </message>
    <message numerus="yes">
        <source>It can use %n GPU(s): the layers of a model that fit in GPU memory run there, fast; the rest run on the CPU from system RAM.</source>
        <translation>
            <numerusform>Die Laufzeitumgebung kann %n GPU nutzen: Die Schichten eines Modells, die in den GPU-Speicher passen, laufen dort schnell; der Rest läuft auf der CPU aus dem System-RAM.</numerusform>
            <numerusform>Die Laufzeitumgebung kann %n GPUs nutzen: Die Schichten eines Modells, die in den GPU-Speicher passen, laufen dort schnell; der Rest läuft auf der CPU aus dem System-RAM.</numerusform>
        </translation>
    </message>
    <message>
        <source>CPU only</source>
        <translation>Nur CPU</translation>
    </message>
    <message>
        <source>This build runs models on the CPU only: they load into system RAM and answer more slowly than on a GPU.</source>
        <translation>Dieser Build führt Modelle nur auf der CPU aus: Sie werden in den System-RAM geladen und antworten langsamer als auf einer GPU.</translation>
    </message>
    <message>
        <source>Devices: {devices}</source>
        <translation>Geräte: {devices}</translation>
    </message>
    <message>
        <source>Not used by this runner build: {gpus}</source>
        <translation>Von diesem Runner-Build nicht genutzt: {gpus}</translation>
    </message>
    <message>
        <source>GPU {index} · {name}</source>
        <translation>GPU {index} · {name}</translation>
    </message>
    <message>
        <source>Used by the runtime</source>
        <translation>Von der Laufzeitumgebung genutzt</translation>
    </message>
    <message>
        <source>Not used</source>
        <translation>Nicht genutzt</translation>
    </message>
    <message>
        <source>estimated</source>
        <translation>geschätzt</translation>
    </message>
    <message>
        <source>shares system RAM</source>
        <translation>teilt sich den System-RAM</translation>
    </message>
    <message>
        <source>memory estimated</source>
        <translation>Speicher geschätzt</translation>
    </message>
    <message>
        <source>compute {version}</source>
        <translation>Compute {version}</translation>
    </message>
    <message>
        <source>driver {version}</source>
        <translation>Treiber {version}</translation>
    </message>
    <message>
        <source>CUDA {version}</source>
        <translation>CUDA {version}</translation>
    </message>
    <message>
        <source>runner device {name}</source>
        <translation>Runner-Gerät {name}</translation>
    </message>
    <message>
        <source>Using it now: {programs}</source>
        <translation>Derzeit genutzt von: {programs}</translation>
    </message>
    <message>
        <source>Using it now: {programs} and {count} more</source>
        <translation>Derzeit genutzt von: {programs} und {count} weiteren</translation>
    </message>
    <message>
        <source>Will not fit</source>
        <translation>Passt nicht</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>Ausblenden</translation>
    </message>
    <message>
        <source>Servers that speak the OpenAI API: another computer running Hearth, llama.cpp&apos;s server, LM Studio, Ollama, vLLM or an online service. Their models appear in the model picker, marked as remote. Hearth contacts a server only when you add it, refresh it, or chat with one of its models.</source>
        <translation>Server, die die OpenAI-API sprechen: ein anderer Computer mit Hearth, der Server von llama.cpp, LM Studio, Ollama, vLLM oder ein Onlinedienst. Ihre Modelle erscheinen in der Modellauswahl, als „Remote“ gekennzeichnet. Hearth kontaktiert einen Server nur, wenn Sie ihn hinzufügen, aktualisieren oder mit einem seiner Modelle chatten.</translation>
    </message>
    <message>
        <source>Knowledge</source>
        <translation>Wissen</translation>
    </message>
    <message>
        <source>Documents and folders every question in this conversation can draw on. Folders are watched: what changes in them is read again.</source>
        <translation>Dokumente und Ordner, auf die jede Frage in diesem Gespräch zurückgreifen kann. Ordner werden beobachtet: Was sich darin ändert, wird erneut gelesen.</translation>
    </message>
    <message>
        <source>Add files…</source>
        <translation>Dateien hinzufügen…</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>Entfernen</translation>
    </message>
    <message>
        <source>Remove from the knowledge</source>
        <translation>Aus dem Wissen entfernen</translation>
    </message>
    <message>
        <source>A conversation keeps at most {count} documents and folders.</source>
        <translation>Ein Gespräch behält höchstens {count} Dokumente und Ordner.</translation>
    </message>
    <message>
        <source>Add documents to the knowledge</source>
        <translation>Dokumente zum Wissen hinzufügen</translation>
    </message>
    <message>
        <source>Documents ({kinds})</source>
        <translation>Dokumente ({kinds})</translation>
    </message>
    <message>
        <source>Add a folder to the knowledge</source>
        <translation>Einen Ordner zum Wissen hinzufügen</translation>
    </message>
    <message>
        <source>OK</source>
        <translation>OK</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <source>Server name</source>
        <translation>Servername</translation>
    </message>
    <message>
        <source>Office PC</source>
        <translation>Büro-PC</translation>
    </message>
    <message>
        <source>Server address</source>
        <translation>Serveradresse</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API-Schlüssel</translation>
    </message>
    <message>
        <source>Add and connect</source>
        <translation>Hinzufügen und verbinden</translation>
    </message>
    <message>
        <source>Address</source>
        <translation>Adresse</translation>
    </message>
    <message>
        <source>Kept in the system keyring, or where there is none in a file only your account can read. Leave it empty for a server that needs none.</source>
        <translation>Wird im Schlüsselbund des Systems gespeichert oder, wo es keinen gibt, in einer Datei, die nur Ihr Benutzerkonto lesen kann. Lassen Sie das Feld leer, wenn der Server keinen Schlüssel braucht.</translation>
    </message>
    <message>
        <source>Unchanged (kept); type to replace</source>
        <translation>Unverändert (beibehalten); zum Ersetzen tippen</translation>
    </message>
    <message>
        <source>None</source>
        <translation>Keine</translation>
    </message>
    <message>
        <source>Save and connect</source>
        <translation>Speichern und verbinden</translation>
    </message>
    <message>
        <source>Edit “{name}”</source>
        <translation>„{name}“ bearbeiten</translation>
    </message>
    <message>
        <source>Add a server</source>
        <translation>Server hinzufügen</translation>
    </message>
    <message>
        <source>No servers yet</source>
        <translation>Noch keine Server</translation>
    </message>
    <message>
        <source>Add one to chat with its models.</source>
        <translation>Fügen Sie einen hinzu, um mit seinen Modellen zu chatten.</translation>
    </message>
    <message>
        <source>Servers</source>
        <translation>Server</translation>
    </message>
    <message>
        <source>Add…</source>
        <translation>Hinzufügen…</translation>
    </message>
    <message>
        <source>Edit…</source>
        <translation>Bearbeiten…</translation>
    </message>
    <message>
        <source>Edit the server</source>
        <translation>Server bearbeiten</translation>
    </message>
    <message>
        <source>Remove the server</source>
        <translation>Server entfernen</translation>
    </message>
    <message>
        <source>Refresh the server</source>
        <translation>Server aktualisieren</translation>
    </message>
    <message>
        <source>Connect to the server again and fetch its list of models</source>
        <translation>Erneut mit dem Server verbinden und seine Modellliste abrufen</translation>
    </message>
    <message>
        <source>Remove “{name}” and forget its API key? Its models leave the picker; conversations with them are kept.</source>
        <translation>„{name}“ entfernen und seinen API-Schlüssel vergessen? Seine Modelle verschwinden aus der Modellauswahl; Unterhaltungen mit ihnen bleiben erhalten.</translation>
    </message>
    <message>
        <source>Connecting…</source>
        <translation>Verbindung wird hergestellt…</translation>
    </message>
    <message>
        <source>Connecting to {name}…</source>
        <translation>Verbindung mit {name} wird hergestellt…</translation>
    </message>
    <message numerus="yes">
        <source>%n model(s), checked {when}</source>
        <translation>
            <numerusform>%n Modell, geprüft {when}</numerusform>
            <numerusform>%n Modelle, geprüft {when}</numerusform>
        </translation>
    </message>
    <message>
        <source>not connected yet</source>
        <translation>noch nicht verbunden</translation>
    </message>
    <message>
        <source>{state} · no key</source>
        <translation>{state} · kein Schlüssel</translation>
    </message>
    <message>
        <source>Hearth: unexpected error</source>
        <translation>Hearth: unerwarteter Fehler</translation>
    </message>
    <message>
        <source>{error}

Details are in the log file. Your conversation is saved.</source>
        <translation>{error}

Details stehen in der Logdatei. Ihre Unterhaltung ist gespeichert.</translation>
    </message>
    <message>
        <source>Discover</source>
        <translation>Entdecken</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>Temperatur</translation>
    </message>
    <message>
        <source>Higher is more varied, 0 always picks the most likely word.</source>
        <translation>Höher ist abwechslungsreicher; 0 wählt immer das wahrscheinlichste Wort.</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>Pick only among the most likely words that together make up this share.</source>
        <translation>Nur unter den wahrscheinlichsten Wörtern wählen, die zusammen diesen Anteil ausmachen.</translation>
    </message>
    <message>
        <source>Top-k</source>
        <translation>Top-k</translation>
    </message>
    <message>
        <source>Pick only among this many most likely words (0: no limit).</source>
        <translation>Nur unter so vielen der wahrscheinlichsten Wörter wählen (0: keine Grenze).</translation>
    </message>
    <message>
        <source>Min-p</source>
        <translation>Min-p</translation>
    </message>
    <message>
        <source>Leave out words less likely than this share of the most likely one.</source>
        <translation>Wörter weglassen, die weniger wahrscheinlich sind als dieser Anteil des wahrscheinlichsten.</translation>
    </message>
    <message>
        <source>Repeat penalty</source>
        <translation>Wiederholungsstrafe</translation>
    </message>
    <message>
        <source>Above 1 makes repeating recent words less likely (1: off).</source>
        <translation>Über 1 macht es unwahrscheinlicher, kürzlich verwendete Wörter zu wiederholen (1: aus).</translation>
    </message>
    <message>
        <source>Max tokens</source>
        <translation>Max. Token</translation>
    </message>
    <message>
        <source>Stop a reply after this many tokens (empty: Hearth&apos;s default; a larger number for longer replies).</source>
        <translation>Eine Antwort nach so vielen Token beenden (leer: Standard von Hearth; eine größere Zahl für längere Antworten).</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>Seed</translation>
    </message>
    <message>
        <source>The same seed, settings and conversation give the same reply (empty: random).</source>
        <translation>Gleicher Seed, gleiche Einstellungen und gleiche Unterhaltung ergeben dieselbe Antwort (leer: zufällig).</translation>
    </message>
    <message>
        <source>{label} is a whole number from {low} to {high}.</source>
        <translation>{label} ist eine ganze Zahl von {low} bis {high}.</translation>
    </message>
    <message>
        <source>{label} is a number from {low} to {high}.</source>
        <translation>{label} ist eine Zahl von {low} bis {high}.</translation>
    </message>
    <message>
        <source>Model default</source>
        <translation>Modellstandard</translation>
    </message>
    <message>
        <source>Precise</source>
        <translation>Präzise</translation>
    </message>
    <message>
        <source>Balanced</source>
        <translation>Ausgewogen</translation>
    </message>
    <message>
        <source>Creative</source>
        <translation>Kreativ</translation>
    </message>
    <message>
        <source>The model header in {source} is incomplete: it needs at least {needed:,} bytes but only {have:,} are there. Download more of the file (or all of it) and try again.</source>
        <translation>Der Modell-Header in {source} ist unvollständig: Er braucht mindestens {needed:,} Bytes, aber nur {have:,} sind vorhanden. Laden Sie mehr von der Datei (oder die ganze Datei) herunter und versuchen Sie es erneut.</translation>
    </message>
    <message>
        <source>the buffer</source>
        <translation>dem Puffer</translation>
    </message>
    <message>
        <source>{source} is damaged: {what}; llama.cpp will refuse it. Download it again, or choose another conversion of the model.</source>
        <translation>{source} ist beschädigt: {what}; llama.cpp wird die Datei ablehnen. Laden Sie sie erneut herunter oder wählen Sie eine andere Konvertierung des Modells.</translation>
    </message>
    <message>
        <source>{source} is damaged: {what}; llama.cpp will refuse it. Download it again.</source>
        <translation>{source} ist beschädigt: {what}; llama.cpp wird die Datei ablehnen. Laden Sie sie erneut herunter.</translation>
    </message>
    <message>
        <source>it lacks the metadata key {key}</source>
        <translation>der Metadatenschlüssel {key} fehlt</translation>
    </message>
    <message>
        <source>the metadata key {key} is stored as {type_name} where llama.cpp reads {wanted}</source>
        <translation>der Metadatenschlüssel {key} ist als {type_name} gespeichert, llama.cpp liest aber {wanted}</translation>
    </message>
    <message>
        <source>the metadata key {key} has {count} entries for {n_layer} layers</source>
        <translation>der Metadatenschlüssel {key} hat {count} Einträge für {n_layer} Schichten</translation>
    </message>
    <message>
        <source>the metadata key {key} is stored as {type_name} where llama.cpp reads uint32</source>
        <translation>der Metadatenschlüssel {key} ist als {type_name} gespeichert, llama.cpp liest aber uint32</translation>
    </message>
    <message>
        <source>{key} is {n_layer_all} (llama.cpp takes 1 to {most})</source>
        <translation>{key} ist {n_layer_all} (llama.cpp akzeptiert 1 bis {most})</translation>
    </message>
    <message>
        <source>{key} is {n_nextn}, more than the {n_layer_all} layers</source>
        <translation>{key} ist {n_nextn}, mehr als die {n_layer_all} Schichten</translation>
    </message>
    <message>
        <source>{key} is {scaling!r}, which llama.cpp does not know</source>
        <translation>{key} ist {scaling!r}, was llama.cpp nicht kennt</translation>
    </message>
    <message>
        <source>{key} is {n_rot} where the heads are {hd_k} wide</source>
        <translation>{key} ist {n_rot}, die Heads sind aber {hd_k} breit</translation>
    </message>
    <message>
        <source>the metadata key {pkey} is stored as {type_name}</source>
        <translation>der Metadatenschlüssel {pkey} ist als {type_name} gespeichert</translation>
    </message>
    <message>
        <source>the metadata key {pkey} has {count} entries</source>
        <translation>der Metadatenschlüssel {pkey} hat {count} Einträge</translation>
    </message>
    <message>
        <source>it has a BPE vocabulary without tokenizer.ggml.merges</source>
        <translation>die Datei hat ein BPE-Vokabular ohne tokenizer.ggml.merges</translation>
    </message>
    <message>
        <source>it lacks its vocabulary (tokenizer.ggml.tokens)</source>
        <translation>das Vokabular fehlt (tokenizer.ggml.tokens)</translation>
    </message>
    <message>
        <source>{key} has {n} entries for {n_tokens} tokens</source>
        <translation>{key} hat {n} Einträge für {n_tokens} Token</translation>
    </message>
    <message>
        <source>the metadata key {key} is stored as {type_name} where llama.cpp reads an array of {wanted}</source>
        <translation>der Metadatenschlüssel {key} ist als {type_name} gespeichert, llama.cpp liest aber ein Array von {wanted}</translation>
    </message>
    <message>
        <source>the tensor {name!r}, which every {arch} model has, is missing</source>
        <translation>der Tensor {name!r}, den jedes {arch}-Modell hat, fehlt</translation>
    </message>
    <message>
        <source>tensor {name!r} has the shape {dims} where this {arch} model needs {wanted}</source>
        <translation>der Tensor {name!r} hat die Form {dims}, dieses {arch}-Modell braucht aber {wanted}</translation>
    </message>
    <message>
        <source>it holds {count} tensor(s) a {arch} model does not use ({names})</source>
        <translation>die Datei enthält Tensoren, die ein {arch}-Modell nicht verwendet (Anzahl: {count}; {names})</translation>
    </message>
    <message>
        <source>{name} names an impossible number of parts ({count}).</source>
        <translation>{name} nennt eine unmögliche Anzahl von Teilen ({count}).</translation>
    </message>
    <message>
        <source>{name} is empty. Download it again.</source>
        <translation>{name} ist leer. Laden Sie die Datei erneut herunter.</translation>
    </message>
    <message>
        <source>Cannot read {path}: {error}.</source>
        <translation>{path} kann nicht gelesen werden: {error}.</translation>
    </message>
    <message>
        <source>{name} is incomplete: its tensors need {end:,} bytes but the file has {size:,}. Let the download finish, or download it again.</source>
        <translation>{name} ist unvollständig: Die Tensoren brauchen {end:,} Bytes, die Datei hat aber {size:,}. Lassen Sie den Download fertig laufen oder laden Sie die Datei erneut herunter.</translation>
    </message>
    <message>
        <source>{path} does not exist.</source>
        <translation>{path} existiert nicht.</translation>
    </message>
    <message>
        <source>{name} is missing: {first} is one of {count} parts and all of them must be in the same folder.</source>
        <translation>{name} fehlt: {first} ist einer von {count} Teilen, und alle müssen im selben Ordner liegen.</translation>
    </message>
    <message>
        <source>{name_hint} is part of a model split into {expected} files; {count} were given. Download every part.</source>
        <translation>{name_hint} ist Teil eines Modells, das auf {expected} Dateien aufgeteilt ist; {count} wurden angegeben. Laden Sie alle Teile herunter.</translation>
    </message>
    <message>
        <source>{name_hint} has no general.architecture; it is not a llama.cpp model.</source>
        <translation>{name_hint} hat kein general.architecture; es ist kein llama.cpp-Modell.</translation>
    </message>
    <message>
        <source>{name_hint} has {n_layer} layers ({arch}.block_count); it is damaged or not a text model.</source>
        <translation>{name_hint} hat {n_layer} Schichten ({arch}.block_count); die Datei ist beschädigt oder kein Textmodell.</translation>
    </message>
    <message>
        <source>{name_hint} lacks {arch}.embedding_length; it is damaged.</source>
        <translation>In {name_hint} fehlt {arch}.embedding_length; die Datei ist beschädigt.</translation>
    </message>
    <message>
        <source>{name_hint} is damaged: {what} has {count} entries for {n_layer} layers.</source>
        <translation>{name_hint} ist beschädigt: {what} hat {count} Einträge für {n_layer} Schichten.</translation>
    </message>
    <message>
        <source>{name_hint} is damaged: {what} is an array of {count} items.</source>
        <translation>{name_hint} ist beschädigt: {what} ist ein Array mit {count} Elementen.</translation>
    </message>
    <message>
        <source>tensor {name!r} has the type {type}, which llama.cpp no longer loads</source>
        <translation>der Tensor {name!r} hat den Typ {type}, den llama.cpp nicht mehr lädt</translation>
    </message>
    <message>
        <source>{source} uses tensor type {ggml_type} (in {name!r}), which this version of Hearth does not know. Update Hearth, or choose another quantization of the model.</source>
        <translation>{source} verwendet den Tensortyp {ggml_type} (in {name!r}), den diese Version von Hearth nicht kennt. Aktualisieren Sie Hearth oder wählen Sie eine andere Quantisierung des Modells.</translation>
    </message>
    <message>
        <source>tensor {name!r} has rows of {row} elements, not a multiple of {block} as {type} needs</source>
        <translation>der Tensor {name!r} hat Zeilen mit {row} Elementen, kein Vielfaches von {block}, wie {type} es braucht</translation>
    </message>
    <message>
        <source>{source} is damaged: its header claims data beyond the end of the file (byte {end:,} of {file_size:,}). Download it again.</source>
        <translation>{source} ist beschädigt: Der Header gibt Daten hinter dem Dateiende an (Byte {end:,} von {file_size:,}). Laden Sie die Datei erneut herunter.</translation>
    </message>
    <message>
        <source>{source} is damaged or not a model: {what} claims a string of {n:,} bytes.</source>
        <translation>{source} ist beschädigt oder kein Modell: {what} gibt eine Zeichenkette von {n:,} Bytes an.</translation>
    </message>
    <message>
        <source>{source} is damaged: a string of {n:,} bytes in an array.</source>
        <translation>{source} ist beschädigt: eine Zeichenkette von {n:,} Bytes in einem Array.</translation>
    </message>
    <message>
        <source>a tensor name</source>
        <translation>ein Tensorname</translation>
    </message>
    <message>
        <source>metadata {key}</source>
        <translation>der Metadateneintrag {key}</translation>
    </message>
    <message>
        <source>a metadata key</source>
        <translation>ein Metadatenschlüssel</translation>
    </message>
    <message>
        <source>{source} is not a GGUF model (it does not start with &apos;GGUF&apos;). Hearth runs GGUF files; look for a file ending in .gguf.</source>
        <translation>{source} ist kein GGUF-Modell (die Datei beginnt nicht mit &apos;GGUF&apos;). Hearth führt GGUF-Dateien aus; suchen Sie nach einer Datei, die auf .gguf endet.</translation>
    </message>
    <message>
        <source>{source} uses GGUF version 1, which llama.cpp no longer loads. Download a newer conversion of the model.</source>
        <translation>{source} verwendet GGUF-Version 1, die llama.cpp nicht mehr lädt. Laden Sie eine neuere Konvertierung des Modells herunter.</translation>
    </message>
    <message>
        <source>{source} is a big-endian GGUF file; download the little-endian one.</source>
        <translation>{source} ist eine Big-Endian-GGUF-Datei; laden Sie die Little-Endian-Variante herunter.</translation>
    </message>
    <message>
        <source>{source} uses GGUF version {version}, which this version of Hearth cannot read. Update Hearth, or download another conversion.</source>
        <translation>{source} verwendet GGUF-Version {version}, die diese Version von Hearth nicht lesen kann. Aktualisieren Sie Hearth oder laden Sie eine andere Konvertierung herunter.</translation>
    </message>
    <message>
        <source>{source} is damaged or hostile: it claims {n_tensors:,} tensors and {n_kv:,} metadata entries.</source>
        <translation>{source} ist beschädigt oder bösartig: Die Datei gibt {n_tensors:,} Tensoren und {n_kv:,} Metadateneinträge an.</translation>
    </message>
    <message>
        <source>metadata entry {i} has an empty name</source>
        <translation>Metadateneintrag {i} hat einen leeren Namen</translation>
    </message>
    <message>
        <source>the metadata key {key!r} appears twice</source>
        <translation>der Metadatenschlüssel {key!r} kommt doppelt vor</translation>
    </message>
    <message>
        <source>general.alignment is not stored as a uint32</source>
        <translation>general.alignment ist nicht als uint32 gespeichert</translation>
    </message>
    <message>
        <source>{source} is damaged: general.alignment is {alignment!r}, not a power of two.</source>
        <translation>{source} ist beschädigt: general.alignment ist {alignment!r}, keine Zweierpotenz.</translation>
    </message>
    <message>
        <source>a tensor name is {count} bytes long (at most {value})</source>
        <translation>ein Tensorname ist {count} Bytes lang (höchstens {value})</translation>
    </message>
    <message>
        <source>tensor {name!r} appears twice</source>
        <translation>der Tensor {name!r} kommt doppelt vor</translation>
    </message>
    <message>
        <source>tensor {name!r} has {n_dims} dimensions</source>
        <translation>der Tensor {name!r} hat {n_dims} Dimensionen</translation>
    </message>
    <message>
        <source>tensor {name!r} has a negative dimension</source>
        <translation>der Tensor {name!r} hat eine negative Dimension</translation>
    </message>
    <message>
        <source>tensor {name!r} has a dimension of 0</source>
        <translation>der Tensor {name!r} hat eine Dimension der Größe 0</translation>
    </message>
    <message>
        <source>{source} is damaged: tensor {name!r} has an impossible shape {list}.</source>
        <translation>{source} ist beschädigt: Der Tensor {name!r} hat eine unmögliche Form {list}.</translation>
    </message>
    <message>
        <source>tensor {name!r} is not aligned to {alignment} bytes</source>
        <translation>der Tensor {name!r} ist nicht an {alignment} Bytes ausgerichtet</translation>
    </message>
    <message>
        <source>tensor {name!r} starts at byte {offset:,} of the data where {expected_offset:,} was expected</source>
        <translation>der Tensor {name!r} beginnt bei Byte {offset:,} der Daten, erwartet war {expected_offset:,}</translation>
    </message>
    <message>
        <source>{source} is damaged: metadata {key!r} has unknown type {vtype}.</source>
        <translation>{source} ist beschädigt: Der Metadateneintrag {key!r} hat den unbekannten Typ {vtype}.</translation>
    </message>
    <message>
        <source>{source} is damaged: metadata {key!r} claims {count:,} items.</source>
        <translation>{source} ist beschädigt: Der Metadateneintrag {key!r} gibt {count:,} Elemente an.</translation>
    </message>
    <message>
        <source>metadata {key!r} is an array of arrays</source>
        <translation>der Metadateneintrag {key!r} ist ein Array aus Arrays</translation>
    </message>
    <message>
        <source>{source} is damaged: metadata {key!r} has items of unknown type {item_type}.</source>
        <translation>{source} ist beschädigt: Der Metadateneintrag {key!r} hat Elemente des unbekannten Typs {item_type}.</translation>
    </message>
    <message>
        <source>The runner&apos;s device list is not readable (no &apos;devices&apos; list); the runner build may be from another Hearth version.</source>
        <translation>Die Geräteliste des Runners ist nicht lesbar (keine &apos;devices&apos;-Liste); der Runner-Build stammt vielleicht von einer anderen Hearth-Version.</translation>
    </message>
    <message>
        <source>The runner&apos;s device list is not readable: {error}</source>
        <translation>Die Geräteliste des Runners ist nicht lesbar: {error}</translation>
    </message>
    <message>
        <source>The token is empty. Paste the token from your Hugging Face settings.</source>
        <translation>Das Token ist leer. Fügen Sie das Token aus Ihren Hugging-Face-Einstellungen ein.</translation>
    </message>
    <message>
        <source>That does not look like a Hugging Face token (it has spaces or unusual characters). Copy it again from your Hugging Face settings.</source>
        <translation>Das sieht nicht wie ein Hugging-Face-Token aus (es enthält Leerzeichen oder ungewöhnliche Zeichen). Kopieren Sie es erneut aus Ihren Hugging-Face-Einstellungen.</translation>
    </message>
    <message>
        <source>Check the connection and press Retry; models already on this computer keep working.</source>
        <translation>Prüfen Sie die Verbindung und drücken Sie „Erneut versuchen“; Modelle, die schon auf diesem Computer sind, funktionieren weiter.</translation>
    </message>
    <message>
        <source>Hugging Face answered a request for bytes {start:,}-{end:,} of {path} with other bytes ({range}). Press Retry; a proxy between you and Hugging Face may be at fault.</source>
        <translation>Hugging Face hat eine Anfrage nach den Bytes {start:,}-{end:,} von {path} mit anderen Bytes beantwortet ({range}). Drücken Sie „Erneut versuchen“; möglicherweise ist ein Proxy zwischen Ihnen und Hugging Face schuld.</translation>
    </message>
    <message>
        <source>Hugging Face answered {status} for {path}; Hearth expected the file&apos;s bytes. Press Retry.</source>
        <translation>Hugging Face hat für {path} mit {status} geantwortet; Hearth hat die Bytes der Datei erwartet. Drücken Sie „Erneut versuchen“.</translation>
    </message>
    <message>
        <source>No Hugging Face token is set. Add one with Token… on the Discover tab or run `hearth login`.</source>
        <translation>Es ist kein Hugging-Face-Token gesetzt. Fügen Sie eines mit „Token…“ im Tab „Entdecken“ hinzu oder führen Sie `hearth login` aus.</translation>
    </message>
    <message>
        <source>Hugging Face did not say whom the token belongs to. Press Retry.</source>
        <translation>Hugging Face hat nicht mitgeteilt, wem das Token gehört. Drücken Sie „Erneut versuchen“.</translation>
    </message>
    <message>
        <source>Hugging Face sent search results Hearth could not read. Press Retry.</source>
        <translation>Hugging Face hat Suchergebnisse gesendet, die Hearth nicht lesen konnte. Drücken Sie „Erneut versuchen“.</translation>
    </message>
    <message>
        <source>Hearth is in offline mode (HF_HUB_OFFLINE is set), so it does not contact Hugging Face. Unset HF_HUB_OFFLINE to browse and download; models already on this computer keep working.</source>
        <translation>Hearth ist im Offlinemodus (HF_HUB_OFFLINE ist gesetzt) und kontaktiert Hugging Face daher nicht. Entfernen Sie HF_HUB_OFFLINE, um Modelle zu durchsuchen und herunterzuladen; Modelle, die schon auf diesem Computer sind, funktionieren weiter.</translation>
    </message>
    <message>
        <source>{repo_id!r} is not a Hugging Face model name; it should look like owner/model-name.</source>
        <translation>{repo_id!r} ist kein Hugging-Face-Modellname; er sollte wie besitzer/modell-name aussehen.</translation>
    </message>
    <message>
        <source>Hearth is in offline mode (HF_HUB_OFFLINE was set when it started), so it does not contact Hugging Face. Restart without HF_HUB_OFFLINE to browse and download.</source>
        <translation>Hearth ist im Offlinemodus (HF_HUB_OFFLINE war beim Start gesetzt) und kontaktiert Hugging Face daher nicht. Starten Sie Hearth ohne HF_HUB_OFFLINE neu, um Modelle zu durchsuchen und herunterzuladen.</translation>
    </message>
    <message>
        <source>Hugging Face refused the token: it is wrong or has expired. Create a new one and save it with Token… on the Discover tab (or run `hearth login`).</source>
        <translation>Hugging Face hat das Token abgelehnt: Es ist falsch oder abgelaufen. Erstellen Sie ein neues und speichern Sie es mit „Token…“ im Tab „Entdecken“ (oder führen Sie `hearth login` aus).</translation>
    </message>
    <message>
        <source>{what} no longer has the version Hearth asked for. Open the model again to see its current files.</source>
        <translation>{what} hat die von Hearth angefragte Version nicht mehr. Öffnen Sie das Modell erneut, um seine aktuellen Dateien zu sehen.</translation>
    </message>
    <message>
        <source>There is no model {what} on Hugging Face (or it is private). Check the name. If it is private, add a token with Token… on the Discover tab.</source>
        <translation>Auf Hugging Face gibt es kein Modell {what} (oder es ist privat). Prüfen Sie den Namen. Wenn es privat ist, fügen Sie mit „Token…“ im Tab „Entdecken“ ein Token hinzu.</translation>
    </message>
    <message>
        <source>There is no model {what} on Hugging Face (or it is private). Check the name.</source>
        <translation>Auf Hugging Face gibt es kein Modell {what} (oder es ist privat). Prüfen Sie den Namen.</translation>
    </message>
    <message>
        <source>{path} is not in {what} any more. Open the model again to see its current files.</source>
        <translation>{path} ist nicht mehr in {what}. Öffnen Sie das Modell erneut, um seine aktuellen Dateien zu sehen.</translation>
    </message>
    <message>
        <source>The file</source>
        <translation>Die Datei</translation>
    </message>
    <message>
        <source>Hugging Face is limiting requests from this computer (429). Wait a minute, then press Retry.</source>
        <translation>Hugging Face begrenzt Anfragen von diesem Computer (429). Warten Sie eine Minute und drücken Sie dann „Erneut versuchen“.</translation>
    </message>
    <message>
        <source>Hugging Face cannot be reached (it answered {status}). {hint}</source>
        <translation>Hugging Face ist nicht erreichbar (Antwort: {status}). {hint}</translation>
    </message>
    <message>
        <source>Hugging Face refused access to {what} (403). Check that your token may read it, with Token… on the Discover tab.</source>
        <translation>Hugging Face hat den Zugriff auf {what} verweigert (403). Prüfen Sie mit „Token…“ im Tab „Entdecken“, ob Ihr Token es lesen darf.</translation>
    </message>
    <message>
        <source>Hugging Face answered {status} for {path}. Press Retry; if it keeps happening, the Hub may have changed.</source>
        <translation>Hugging Face hat für {path} mit {status} geantwortet. Drücken Sie „Erneut versuchen“; wenn das weiter passiert, hat sich der Hub vielleicht geändert.</translation>
    </message>
    <message>
        <source>{what!r} is not a Hugging Face model name; it should look like owner/model-name.</source>
        <translation>{what!r} ist kein Hugging-Face-Modellname; er sollte wie besitzer/modell-name aussehen.</translation>
    </message>
    <message>
        <source>Hugging Face cannot be reached ({cause}). {hint}</source>
        <translation>Hugging Face ist nicht erreichbar ({cause}). {hint}</translation>
    </message>
    <message>
        <source>Hugging Face sent an answer Hearth could not read ({error}). Press Retry.</source>
        <translation>Hugging Face hat eine Antwort gesendet, die Hearth nicht lesen konnte ({error}). Drücken Sie „Erneut versuchen“.</translation>
    </message>
    <message>
        <source>{name} is gated: accept its license on {page} with your Hugging Face account, then press Retry.</source>
        <translation>{name} ist zugangsbeschränkt: Akzeptieren Sie die Lizenz auf {page} mit Ihrem Hugging-Face-Konto und drücken Sie dann „Erneut versuchen“.</translation>
    </message>
    <message>
        <source>Hugging Face refused the token for {name}: it is wrong or has expired. Create a new one and save it with Token… on the Discover tab (or run `hearth login`).</source>
        <translation>Hugging Face hat das Token für {name} abgelehnt: Es ist falsch oder abgelaufen. Erstellen Sie ein neues und speichern Sie es mit „Token…“ im Tab „Entdecken“ (oder führen Sie `hearth login` aus).</translation>
    </message>
    <message>
        <source>{name} is gated: it needs a Hugging Face account. Add a token with Token… on the Discover tab (or run `hearth login`) and accept the license on {page}.</source>
        <translation>{name} ist zugangsbeschränkt: Dafür ist ein Hugging-Face-Konto nötig. Fügen Sie mit „Token…“ im Tab „Entdecken“ ein Token hinzu (oder führen Sie `hearth login` aus) und akzeptieren Sie die Lizenz auf {page}.</translation>
    </message>
    <message>
        <source>no answer in time</source>
        <translation>keine Antwort in der vorgesehenen Zeit</translation>
    </message>
    <message>
        <source>the proxy refused the connection</source>
        <translation>der Proxy hat die Verbindung abgelehnt</translation>
    </message>
    <message>
        <source>the name huggingface.co could not be looked up</source>
        <translation>der Name huggingface.co konnte nicht aufgelöst werden</translation>
    </message>
    <message>
        <source>the connection was refused</source>
        <translation>die Verbindung wurde abgelehnt</translation>
    </message>
    <message>
        <source>the connection broke off</source>
        <translation>die Verbindung ist abgebrochen</translation>
    </message>
    <message>
        <source>network error</source>
        <translation>Netzwerkfehler</translation>
    </message>
    <message>
        <source>Hugging Face sent an answer Hearth could not read. Press Retry.</source>
        <translation>Hugging Face hat eine Antwort gesendet, die Hearth nicht lesen konnte. Drücken Sie „Erneut versuchen“.</translation>
    </message>
    <message>
        <source>The Hub does not list the size of {path}, so Hearth cannot check the download. Reload the repository and try again.</source>
        <translation>Der Hub gibt die Größe von {path} nicht an, daher kann Hearth den Download nicht prüfen. Laden Sie das Repository neu und versuchen Sie es erneut.</translation>
    </message>
    <message>
        <source>{size:.1f} GB</source>
        <translation>{size:.1f} GB</translation>
    </message>
    <message>
        <source>{size:.1f} MB</source>
        <translation>{size:.1f} MB</translation>
    </message>
    <message>
        <source>downloading</source>
        <translation>wird heruntergeladen</translation>
    </message>
    <message>
        <source>done</source>
        <translation>fertig</translation>
    </message>
    <message>
        <source>{first}; {then}</source>
        <translation>{first}; {then}</translation>
    </message>
    <message>
        <source>another process</source>
        <translation>ein anderer Prozess</translation>
    </message>
    <message>
        <source>waiting: {name} is being downloaded by another Hearth ({holder})</source>
        <translation>wartet: {name} wird von einem anderen Hearth heruntergeladen ({holder})</translation>
    </message>
    <message>
        <source>Download paused.</source>
        <translation>Download pausiert.</translation>
    </message>
    <message>
        <source>The Hub lists a negative size for {name}.</source>
        <translation>Der Hub gibt für {name} eine negative Größe an.</translation>
    </message>
    <message>
        <source>verifying</source>
        <translation>wird geprüft</translation>
    </message>
    <message>
        <source>This download needs {needed} more free space (with a small reserve) but only {free} is free on {drive}. Free some space or choose another models folder, then start it again; nothing was deleted.</source>
        <translation>Dieser Download braucht {needed} mehr freien Speicherplatz (mit einer kleinen Reserve), aber auf {drive} sind nur {free} frei. Schaffen Sie Platz oder wählen Sie einen anderen Modellordner und starten Sie den Download dann erneut; es wurde nichts gelöscht.</translation>
    </message>
    <message numerus="yes">
        <source>%n damaged part(s) fetched again</source>
        <translation>
            <numerusform>%n beschädigter Teil erneut geholt</numerusform>
            <numerusform>%n beschädigte Teile erneut geholt</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>fetching %n damaged part(s) again</source>
        <translation>
            <numerusform>%n beschädigter Teil wird erneut geholt</numerusform>
            <numerusform>%n beschädigte Teile werden erneut geholt</numerusform>
        </translation>
    </message>
    <message>
        <source>{name} still does not match the Hub&apos;s checksum after it was fetched again whole; the damaged download was deleted. Try again later; if it keeps happening the file on the Hub or a proxy on the way may be at fault.</source>
        <translation>{name} stimmt auch nach dem erneuten vollständigen Herunterladen nicht mit der Prüfsumme des Hubs überein; der beschädigte Download wurde gelöscht. Versuchen Sie es später noch einmal; wenn das weiter passiert, liegt der Fehler vielleicht an der Datei auf dem Hub oder an einem Proxy unterwegs.</translation>
    </message>
    <message>
        <source>the whole file did not match its checksum and is fetched again</source>
        <translation>die ganze Datei stimmte nicht mit ihrer Prüfsumme überein und wird erneut geholt</translation>
    </message>
    <message>
        <source>{name} arrived damaged and was fetched again whole</source>
        <translation>{name} kam beschädigt an und wurde vollständig erneut geholt</translation>
    </message>
    <message>
        <source>the file did not match its checksum: fetching it again</source>
        <translation>die Datei stimmte nicht mit ihrer Prüfsumme überein: sie wird erneut geholt</translation>
    </message>
    <message>
        <source>verifying: looking for damaged parts</source>
        <translation>wird geprüft: Suche nach beschädigten Teilen</translation>
    </message>
    <message>
        <source>the connection closed early</source>
        <translation>die Verbindung wurde vorzeitig geschlossen</translation>
    </message>
    <message>
        <source>Hearth could not download {name}: {why} ({tries} tries in a row). What was downloaded so far is kept; resume when the connection is back.</source>
        <translation>Hearth konnte {name} nicht herunterladen: {why} ({tries} Versuche hintereinander). Was bisher heruntergeladen wurde, bleibt erhalten; setzen Sie den Download fort, sobald die Verbindung wieder da ist.</translation>
    </message>
    <message>
        <source>retrying in {seconds}s: {why}</source>
        <translation>neuer Versuch in {seconds} s: {why}</translation>
    </message>
    <message>
        <source>the server stopped honouring byte ranges</source>
        <translation>der Server beachtet keine Byte-Bereiche mehr</translation>
    </message>
    <message>
        <source>the server sent other bytes than asked ({range})</source>
        <translation>der Server hat andere Bytes gesendet als angefragt ({range})</translation>
    </message>
    <message>
        <source>the server announced a length that does not match the range</source>
        <translation>der Server hat eine Länge angekündigt, die nicht zum Bereich passt</translation>
    </message>
    <message>
        <source>The server sent more bytes for {name} than it announced; Hearth stopped reading and kept what it had. Try again later.</source>
        <translation>Der Server hat für {name} mehr Bytes gesendet als angekündigt; Hearth hat aufgehört zu lesen und das Bisherige behalten. Versuchen Sie es später noch einmal.</translation>
    </message>
    <message>
        <source>Hearth could not write {part}: {error}. What was downloaded so far is kept.</source>
        <translation>Hearth konnte {part} nicht schreiben: {error}. Was bisher heruntergeladen wurde, bleibt erhalten.</translation>
    </message>
    <message>
        <source>The disk {drive} filled up while downloading {name} ({free} free, {missing} still to come). The download is paused and keeps what it has: free some space, then resume.</source>
        <translation>Der Datenträger {drive} ist beim Herunterladen von {name} voll geworden ({free} frei, {missing} stehen noch aus). Der Download ist pausiert und behält, was er hat: Schaffen Sie Platz und setzen Sie ihn dann fort.</translation>
    </message>
    <message>
        <source>The server does not accept Range requests: this file cannot resume and is fetched from the start after any interruption.</source>
        <translation>Der Server akzeptiert keine Range-Anfragen: Diese Datei kann nicht fortgesetzt werden und wird nach jeder Unterbrechung von vorn geholt.</translation>
    </message>
    <message>
        <source>{why}; this server cannot resume, so the file starts over</source>
        <translation>{why}; dieser Server kann nicht fortsetzen, daher beginnt die Datei von vorn</translation>
    </message>
    <message>
        <source>the server sent a broken length ({value!r})</source>
        <translation>der Server hat eine fehlerhafte Länge gesendet ({value!r})</translation>
    </message>
    <message>
        <source>The server says {name} is {size:,} bytes, but the Hub listed {listed:,}. The repository may have changed: reload it and start the download again.</source>
        <translation>Laut Server ist {name} {size:,} Bytes groß, der Hub hat aber {listed:,} angegeben. Das Repository hat sich vielleicht geändert: Laden Sie es neu und starten Sie den Download erneut.</translation>
    </message>
    <message>
        <source>no data for {seconds:g} s</source>
        <translation>keine Daten seit {seconds:g} s</translation>
    </message>
    <message>
        <source>the server did not answer in time</source>
        <translation>der Server hat nicht rechtzeitig geantwortet</translation>
    </message>
    <message>
        <source>the server cannot be reached</source>
        <translation>der Server ist nicht erreichbar</translation>
    </message>
    <message>
        <source>the server answered {status}</source>
        <translation>der Server hat mit {status} geantwortet</translation>
    </message>
    <message>
        <source>{name} is in a gated repository: accept its license on {page} with your Hugging Face account, then press Retry.</source>
        <translation>{name} liegt in einem zugangsbeschränkten Repository: Akzeptieren Sie die Lizenz auf {page} mit Ihrem Hugging-Face-Konto und drücken Sie dann „Erneut versuchen“.</translation>
    </message>
    <message>
        <source>{name} is in a gated repository: add a Hugging Face token with Token… on the Discover tab and accept the license on {page}, then press Retry.</source>
        <translation>{name} liegt in einem zugangsbeschränkten Repository: Fügen Sie mit „Token…“ im Tab „Entdecken“ ein Hugging-Face-Token hinzu, akzeptieren Sie die Lizenz auf {page} und drücken Sie dann „Erneut versuchen“.</translation>
    </message>
    <message>
        <source>Hugging Face refused the token for {name} ({status}): it is wrong, has expired or may not read this repository. Save a new one with Token… on the Discover tab, then press Retry.</source>
        <translation>Hugging Face hat das Token für {name} abgelehnt ({status}): Es ist falsch, abgelaufen oder darf dieses Repository nicht lesen. Speichern Sie mit „Token…“ im Tab „Entdecken“ ein neues und drücken Sie dann „Erneut versuchen“.</translation>
    </message>
    <message>
        <source>The repository for {name} is no longer on Hugging Face at this revision (404, {page}). Reload the repository and start a new download.</source>
        <translation>Das Repository für {name} ist in dieser Revision nicht mehr auf Hugging Face (404, {page}). Laden Sie das Repository neu und starten Sie einen neuen Download.</translation>
    </message>
    <message>
        <source>The file for {name} is no longer on Hugging Face at this revision (404, {page}). Reload the repository and start a new download.</source>
        <translation>Die Datei für {name} ist in dieser Revision nicht mehr auf Hugging Face (404, {page}). Laden Sie das Repository neu und starten Sie einen neuen Download.</translation>
    </message>
    <message>
        <source>Hugging Face no longer has the bytes Hearth asked for in {name} (416): the file may have changed. Reload the repository and start again.</source>
        <translation>Hugging Face hat die Bytes, die Hearth in {name} angefragt hat, nicht mehr (416): Die Datei hat sich vielleicht geändert. Laden Sie das Repository neu und beginnen Sie von vorn.</translation>
    </message>
    <message>
        <source>Hugging Face answered {status} for {name}; Hearth expected the file&apos;s bytes. Try again later.</source>
        <translation>Hugging Face hat für {name} mit {status} geantwortet; Hearth hat die Bytes der Datei erwartet. Versuchen Sie es später noch einmal.</translation>
    </message>
    <message>
        <source>paused: by you</source>
        <translation>pausiert: von Ihnen</translation>
    </message>
    <message>
        <source>paused: the disk is full</source>
        <translation>pausiert: der Datenträger ist voll</translation>
    </message>
    <message>
        <source>The Hub gave a file name Hearth will not write to disk ({shown!r}): {why}. Nothing was downloaded.</source>
        <translation>Der Hub hat einen Dateinamen angegeben, den Hearth nicht auf die Festplatte schreibt ({shown!r}): {why}. Es wurde nichts heruntergeladen.</translation>
    </message>
    <message>
        <source>it is empty or starts or ends with spaces</source>
        <translation>er ist leer oder beginnt oder endet mit Leerzeichen</translation>
    </message>
    <message>
        <source>it contains control or invisible characters</source>
        <translation>er enthält Steuerzeichen oder unsichtbare Zeichen</translation>
    </message>
    <message>
        <source>it contains a backslash</source>
        <translation>er enthält einen Backslash</translation>
    </message>
    <message>
        <source>it is an absolute path</source>
        <translation>er ist ein absoluter Pfad</translation>
    </message>
    <message>
        <source>it contains a colon (a drive letter or an alternate data stream on Windows)</source>
        <translation>er enthält einen Doppelpunkt (einen Laufwerksbuchstaben oder einen alternativen Datenstrom unter Windows)</translation>
    </message>
    <message>
        <source>it is nested too deeply</source>
        <translation>er ist zu tief verschachtelt</translation>
    </message>
    <message>
        <source>it has an empty, &apos;.&apos; or &apos;..&apos; component</source>
        <translation>er hat einen leeren Bestandteil, &apos;.&apos; oder &apos;..&apos;</translation>
    </message>
    <message>
        <source>a component is longer than file systems allow</source>
        <translation>ein Bestandteil ist länger, als Dateisysteme erlauben</translation>
    </message>
    <message>
        <source>a component ends with a dot or a space</source>
        <translation>ein Bestandteil endet mit einem Punkt oder einem Leerzeichen</translation>
    </message>
    <message>
        <source>it uses a reserved Windows device name</source>
        <translation>er verwendet einen reservierten Windows-Gerätenamen</translation>
    </message>
    <message>
        <source>it contains a character Windows does not allow in file names</source>
        <translation>er enthält ein Zeichen, das Windows in Dateinamen nicht erlaubt</translation>
    </message>
    <message>
        <source>The file name {name!r} would lead outside {folder}. Nothing was downloaded.</source>
        <translation>Der Dateiname {name!r} würde aus {folder} hinausführen. Es wurde nichts heruntergeladen.</translation>
    </message>
    <message>
        <source>{name} says it is split into {count} parts, but the repository lists {listed}. It cannot be loaded as listed.</source>
        <translation>{name} gibt an, in {count} Teile aufgeteilt zu sein, das Repository führt aber {listed} auf. So kann das Modell nicht geladen werden.</translation>
    </message>
    <message>
        <source>{name} (part {number})</source>
        <translation>{name} (Teil {number})</translation>
    </message>
    <message>
        <source>The header of {name} is incomplete ({error}).</source>
        <translation>Der Header von {name} ist unvollständig ({error}).</translation>
    </message>
    <message>
        <source>{name} ends inside its own header: the file on Hugging Face is damaged or not a model.</source>
        <translation>{name} endet mitten im eigenen Header: Die Datei auf Hugging Face ist beschädigt oder kein Modell.</translation>
    </message>
    <message>
        <source>{name} claims a header of more than {needed:,.0f} MiB; real models need a few. Hearth stops at {most} MiB: the file is damaged or not a model.</source>
        <translation>{name} gibt einen Header von mehr als {needed:,.0f} MiB an; echte Modelle brauchen wenige. Hearth hört bei {most} MiB auf: Die Datei ist beschädigt oder kein Modell.</translation>
    </message>
    <message>
        <source>Fits on the GPU · {context} context</source>
        <translation>Passt auf die GPU · {context} Kontext</translation>
    </message>
    <message>
        <source>Partial offload: {gpu_layers} of {layers} layers on the GPU · {context} context</source>
        <translation>Teilweise ausgelagert: {gpu_layers} von {layers} Schichten auf der GPU · {context} Kontext</translation>
    </message>
    <message>
        <source>CPU only · {context} context</source>
        <translation>Nur CPU · {context} Kontext</translation>
    </message>
    <message>
        <source>Will not fit on this computer</source>
        <translation>Passt nicht auf diesen Computer</translation>
    </message>
    <message>
        <source>• {reason}</source>
        <translation>• {reason}</translation>
    </message>
    <message>
        <source>{thousands}k</source>
        <translation>{thousands}k</translation>
    </message>
    <message>
        <source>{tokens:,}</source>
        <translation>{tokens:,}</translation>
    </message>
    <message>
        <source>{name} is missing parts: download every part before checking it.</source>
        <translation>{name} fehlen Teile: Laden Sie alle Teile herunter, bevor Sie es prüfen.</translation>
    </message>
    <message>
        <source>Hearth only deletes models it downloaded into {models_dir}; {part} belongs to {owner}. Remove it there.</source>
        <translation>Hearth löscht nur Modelle, die es nach {models_dir} heruntergeladen hat; {part} gehört zu {owner}. Entfernen Sie es dort.</translation>
    </message>
    <message>
        <source>Cannot delete {part}: {error}. Close any program using it and try again.</source>
        <translation>{part} kann nicht gelöscht werden: {error}. Schließen Sie alle Programme, die die Datei verwenden, und versuchen Sie es erneut.</translation>
    </message>
    <message>
        <source>save the new conversation</source>
        <translation>die neue Unterhaltung zu speichern</translation>
    </message>
    <message>
        <source>read the list of conversations</source>
        <translation>die Liste der Unterhaltungen zu lesen</translation>
    </message>
    <message>
        <source>search the conversations</source>
        <translation>die Unterhaltungen zu durchsuchen</translation>
    </message>
    <message>
        <source>read the conversation</source>
        <translation>die Unterhaltung zu lesen</translation>
    </message>
    <message>
        <source>save the message</source>
        <translation>die Nachricht zu speichern</translation>
    </message>
    <message>
        <source>save the reply</source>
        <translation>die Antwort zu speichern</translation>
    </message>
    <message>
        <source>switch to another version of the conversation</source>
        <translation>zu einer anderen Version der Unterhaltung zu wechseln</translation>
    </message>
    <message>
        <source>save the conversation&apos;s settings</source>
        <translation>die Einstellungen der Unterhaltung zu speichern</translation>
    </message>
    <message>
        <source>save the conversation&apos;s model</source>
        <translation>das Modell der Unterhaltung zu speichern</translation>
    </message>
    <message>
        <source>delete the conversation</source>
        <translation>die Unterhaltung zu löschen</translation>
    </message>
    <message>
        <source>read the model&apos;s settings</source>
        <translation>die Einstellungen des Modells zu lesen</translation>
    </message>
    <message>
        <source>save the model&apos;s settings</source>
        <translation>die Einstellungen des Modells zu speichern</translation>
    </message>
    <message>
        <source>reset the model&apos;s settings</source>
        <translation>die Einstellungen des Modells zurückzusetzen</translation>
    </message>
    <message>
        <source>save the model list</source>
        <translation>die Modellliste zu speichern</translation>
    </message>
    <message>
        <source>read the model list</source>
        <translation>die Modellliste zu lesen</translation>
    </message>
    <message>
        <source>update the model list</source>
        <translation>die Modellliste zu aktualisieren</translation>
    </message>
    <message>
        <source>System RAM</source>
        <translation>System-RAM</translation>
    </message>
    <message>
        <source>the model needs {need} of {capacity}</source>
        <translation>das Modell braucht {need} von {capacity}</translation>
    </message>
    <message>
        <source>none of the model; {capacity} in all</source>
        <translation>nichts vom Modell; {capacity} insgesamt</translation>
    </message>
    <message>
        <source>{device} · {layers} · {share}</source>
        <translation>{device} · {layers} · {share}</translation>
    </message>
    <message numerus="yes">
        <source>%n layer(s)</source>
        <translation>
            <numerusform>%n Schicht</numerusform>
            <numerusform>%n Schichten</numerusform>
        </translation>
    </message>
    <message>
        <source>{device} · {share}</source>
        <translation>{device} · {share}</translation>
    </message>
    <message>
        <source>Other programs use {others} now; {free} is free.</source>
        <translation>Andere Programme belegen jetzt {others}; {free} ist frei.</translation>
    </message>
    <message>
        <source>the runner&apos;s dry run could not run ({error})</source>
        <translation>der Probelauf des Runners konnte nicht ausgeführt werden ({error})</translation>
    </message>
    <message>
        <source>the runner&apos;s dry run failed: {why}</source>
        <translation>der Probelauf des Runners ist fehlgeschlagen: {why}</translation>
    </message>
    <message>
        <source>This plan was made from a partial download; download the model before starting it.</source>
        <translation>Dieser Plan wurde aus einem unvollständigen Download erstellt; laden Sie das Modell vollständig herunter, bevor Sie es starten.</translation>
    </message>
    <message>
        <source>Retrying with smaller settings.</source>
        <translation>Neuer Versuch mit kleineren Einstellungen.</translation>
    </message>
    <message>
        <source>on the CPU</source>
        <translation>auf der CPU</translation>
    </message>
    <message>
        <source>{layers}/{top} layers on the GPU</source>
        <translation>{layers}/{top} Schichten auf der GPU</translation>
    </message>
    <message>
        <source>{layers}/{top} layers on {gpus} GPUs</source>
        <translation>{layers}/{top} Schichten auf {gpus} GPUs</translation>
    </message>
    <message>
        <source>{layers}, context {n_ctx}</source>
        <translation>{layers}, Kontext {n_ctx}</translation>
    </message>
    <message>
        <source>{settings}, KV cache {kv}</source>
        <translation>{settings}, KV-Cache {kv}</translation>
    </message>
    <message>
        <source>{settings}, experts of {n_cpu_moe} layers in RAM</source>
        <translation>{settings}, Experten von {n_cpu_moe} Schichten im RAM</translation>
    </message>
    <message>
        <source>Planning how to load {name}…</source>
        <translation>Es wird geplant, wie {name} geladen wird…</translation>
    </message>
    <message>
        <source>Loading {name}…</source>
        <translation>{name} wird geladen…</translation>
    </message>
    <message>
        <source>Loading {name} — {settings}…</source>
        <translation>{name} wird geladen — {settings}…</translation>
    </message>
    <message>
        <source>{name} is ready.</source>
        <translation>{name} ist bereit.</translation>
    </message>
    <message>
        <source>{name} is ready — {settings}.</source>
        <translation>{name} ist bereit — {settings}.</translation>
    </message>
    <message>
        <source>No model loaded.</source>
        <translation>Kein Modell geladen.</translation>
    </message>
    <message>
        <source>Unloading…</source>
        <translation>Wird entladen…</translation>
    </message>
    <message>
        <source>The model does not fit in this computer&apos;s memory.</source>
        <translation>Das Modell passt nicht in den Speicher dieses Computers.</translation>
    </message>
    <message>
        <source>Not loaded: {why}</source>
        <translation>Nicht geladen: {why}</translation>
    </message>
    <message>
        <source>The model could not be loaded.</source>
        <translation>Das Modell konnte nicht geladen werden.</translation>
    </message>
    <message numerus="yes">
        <source>{message} Hearth retried %n time(s) with smaller settings, down to {settings}. Choose a smaller model or quantization, or close other programs and load it again.</source>
        <translation>
            <numerusform>{message} Hearth hat es %n Mal mit kleineren Einstellungen erneut versucht, bis hinunter zu {settings}. Wählen Sie ein kleineres Modell oder eine kleinere Quantisierung, oder schließen Sie andere Programme und laden Sie es erneut.</numerusform>
            <numerusform>{message} Hearth hat es %n Mal mit kleineren Einstellungen erneut versucht, bis hinunter zu {settings}. Wählen Sie ein kleineres Modell oder eine kleinere Quantisierung, oder schließen Sie andere Programme und laden Sie es erneut.</numerusform>
        </translation>
    </message>
    <message>
        <source>{message} There were no smaller settings to try. Choose a smaller model or quantization, or close other programs and load it again.</source>
        <translation>{message} Es gab keine kleineren Einstellungen mehr zum Ausprobieren. Wählen Sie ein kleineres Modell oder eine kleinere Quantisierung, oder schließen Sie andere Programme und laden Sie es erneut.</translation>
    </message>
    <message>
        <source>{message}.</source>
        <translation>{message}.</translation>
    </message>
    <message>
        <source>The model runner stopped.</source>
        <translation>Der Modell-Runner wurde beendet.</translation>
    </message>
    <message>
        <source>{message} Restart the model to continue; the conversation is kept.</source>
        <translation>{message} Starten Sie das Modell neu, um fortzufahren; die Unterhaltung bleibt erhalten.</translation>
    </message>
    <message>
        <source>These settings do not fit in this computer&apos;s memory.</source>
        <translation>Diese Einstellungen passen nicht in den Speicher dieses Computers.</translation>
    </message>
    <message>
        <source>Used by other apps</source>
        <translation>Von anderen Apps belegt</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>Gewichte</translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation>KV-Cache</translation>
    </message>
    <message>
        <source>Compute buffers</source>
        <translation>Rechenpuffer</translation>
    </message>
    <message>
        <source>CUDA&apos;s own (context, cuBLAS)</source>
        <translation>Eigenbedarf von CUDA (Kontext, cuBLAS)</translation>
    </message>
    <message>
        <source>Vision projector</source>
        <translation>Bild-Projektor</translation>
    </message>
    <message>
        <source>Draft model</source>
        <translation>Entwurfsmodell</translation>
    </message>
    <message>
        <source>GPU (shared memory)</source>
        <translation>GPU (gemeinsamer Speicher)</translation>
    </message>
    <message>
        <source>Kept free</source>
        <translation>Freigehalten</translation>
    </message>
    <message>
        <source>{part} {size}</source>
        <translation>{part} {size}</translation>
    </message>
    <message>
        <source>Nothing of the model</source>
        <translation>Nichts vom Modell</translation>
    </message>
    <message>
        <source>Does not fit: needs {need}, {budget} available after keeping {reserve} free ({parts}).</source>
        <translation>Passt nicht: braucht {need}, verfügbar sind {budget}, nachdem {reserve} freigehalten werden ({parts}).</translation>
    </message>
    <message>
        <source>{parts}; {reserve} kept free.</source>
        <translation>{parts}; {reserve} freigehalten.</translation>
    </message>
    <message>
        <source>{part} {size} (predicted {predicted})</source>
        <translation>{part} {size} (vorhergesagt {predicted})</translation>
    </message>
    <message>
        <source>Measured after load: {parts}.</source>
        <translation>Nach dem Laden gemessen: {parts}.</translation>
    </message>
    <message>
        <source>Type the worker&apos;s address, such as 192.168.1.20:50052.</source>
        <translation>Geben Sie die Adresse des Workers ein, etwa 192.168.1.20:50052.</translation>
    </message>
    <message>
        <source>{typed} is not an address: type host:port, such as 192.168.1.20:50052.</source>
        <translation>{typed} ist keine Adresse: Geben Sie host:port ein, etwa 192.168.1.20:50052.</translation>
    </message>
    <message>
        <source>The port in {typed} must be a number from 1 to 65535.</source>
        <translation>Der Port in {typed} muss eine Zahl von 1 bis 65535 sein.</translation>
    </message>
    <message>
        <source>the check could not run ({error})</source>
        <translation>die Prüfung konnte nicht ausgeführt werden ({error})</translation>
    </message>
    <message>
        <source>{first} {then}</source>
        <translation>{first} {then}</translation>
    </message>
    <message>
        <source>{first}
{then}</source>
        <translation>{first}
{then}</translation>
    </message>
    <message>
        <source>{first}, {then}</source>
        <translation>{first}, {then}</translation>
    </message>
    <message>
        <source>{size:.1f} GiB</source>
        <translation>{size:.1f} GiB</translation>
    </message>
    <message>
        <source>{size:.0f} MiB</source>
        <translation>{size:.0f} MiB</translation>
    </message>
    <message>
        <source>GPU</source>
        <translation>GPU</translation>
    </message>
    <message>
        <source>the {names}</source>
        <translation>der {names}</translation>
    </message>
    <message numerus="yes">
        <source>%n device(s)</source>
        <translation>
            <numerusform>%n Gerät</numerusform>
            <numerusform>%n Geräte</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n GPU(s)</source>
        <translation>
            <numerusform>%n GPU</numerusform>
            <numerusform>%n GPUs</numerusform>
        </translation>
    </message>
    <message>
        <source>{first} or {then}</source>
        <translation>{first} oder {then}</translation>
    </message>
    <message>
        <source>{device}: KV ×{kv:.2f}, compute ×{compute:.2f}</source>
        <translation>{device}: KV ×{kv:.2f}, Rechenpuffer ×{compute:.2f}</translation>
    </message>
    <message>
        <source>{device}: KV ×{kv:.3f}, compute ×{compute:.3f}</source>
        <translation>{device}: KV ×{kv:.3f}, Rechenpuffer ×{compute:.3f}</translation>
    </message>
    <message>
        <source>no change</source>
        <translation>keine Änderung</translation>
    </message>
    <message>
        <source>The runner does not see the {names} (is the {backends} driver loaded?): running on the CPU.</source>
        <translation>Der Runner sieht die {names} nicht (ist der {backends}-Treiber geladen?): Das Modell läuft auf der CPU.</translation>
    </message>
    <message>
        <source>This runner build has no {backends} support: running on the CPU. A {backends} build of the runner would use the {names}.</source>
        <translation>Dieser Runner-Build unterstützt {backends} nicht: Das Modell läuft auf der CPU. Ein {backends}-Build des Runners würde die {names} nutzen.</translation>
    </message>
    <message>
        <source>The {names} is not used: the runner does not see it (is the {backends} driver loaded?).</source>
        <translation>Die {names} wird nicht genutzt: Der Runner sieht sie nicht (ist der {backends}-Treiber geladen?).</translation>
    </message>
    <message>
        <source>The {names} are not used: the runner does not see them (is the {backends} driver loaded?).</source>
        <translation>Die {names} werden nicht genutzt: Der Runner sieht sie nicht (ist der {backends}-Treiber geladen?).</translation>
    </message>
    <message>
        <source>The {names} is not used: this runner build has no {backends} support.</source>
        <translation>Die {names} wird nicht genutzt: Dieser Runner-Build unterstützt {backends} nicht.</translation>
    </message>
    <message>
        <source>The {names} are not used: this runner build has no {backends} support.</source>
        <translation>Die {names} werden nicht genutzt: Dieser Runner-Build unterstützt {backends} nicht.</translation>
    </message>
    <message>
        <source>All {layers} layers are on {where}, but the expert tensors of the first {n_cpu_moe} of {n_layer} layers stay in system RAM: that keeps attention and the other layers on the GPU, which is faster than moving whole layers to the CPU.</source>
        <translation>Alle {layers} Schichten liegen auf {where}, aber die Experten-Tensoren der ersten {n_cpu_moe} von {n_layer} Schichten bleiben im System-RAM: So bleiben Attention und die übrigen Schichten auf der GPU, was schneller ist, als ganze Schichten auf die CPU zu verlagern.</translation>
    </message>
    <message>
        <source>{n_gpu_layers} of {layers} layers on the {names}, {n_cpu_layers} on the CPU: the layers need {need} and the GPU memory available after the margin is {have}.</source>
        <translation>{n_gpu_layers} von {layers} Schichten auf der {names}, {n_cpu_layers} auf der CPU: Die Schichten brauchen {need}, und nach Abzug der Reserve sind {have} GPU-Speicher verfügbar.</translation>
    </message>
    <message>
        <source>The KV cache is stored as {cache_type} (about half the memory of f16) because f16 did not fit with every layer on the GPU.</source>
        <translation>Der KV-Cache wird als {cache_type} gespeichert (etwa halb so viel Speicher wie f16), weil f16 mit allen Schichten auf der GPU nicht gepasst hat.</translation>
    </message>
    <message>
        <source>The KV cache is stored as {cache_type} (about half the memory of f16) because f16 did not fit.</source>
        <translation>Der KV-Cache wird als {cache_type} gespeichert (etwa halb so viel Speicher wie f16), weil f16 nicht gepasst hat.</translation>
    </message>
    <message>
        <source>The vision projector {file} loads with the model, so it can see images: about {size} on the {gpu}, where its layers are.</source>
        <translation>Der Bild-Projektor {file} wird mit dem Modell geladen, damit es Bilder sehen kann: etwa {size} auf der {gpu}, wo seine Schichten liegen.</translation>
    </message>
    <message>
        <source>The vision projector {file} loads with the model, so it can see images: about {size} of system RAM.</source>
        <translation>Der Bild-Projektor {file} wird mit dem Modell geladen, damit es Bilder sehen kann: etwa {size} Arbeitsspeicher.</translation>
    </message>
    <message>
        <source>about {size} on the {gpu}</source>
        <translation>etwa {size} auf der {gpu}</translation>
    </message>
    <message>
        <source>about {size} of system RAM</source>
        <translation>etwa {size} Arbeitsspeicher</translation>
    </message>
    <message>
        <source>{file} loads beside it as a draft model ({where}): it proposes a few words at a time and the model checks them at once. This first load measures whether that is faster on this computer; Hearth keeps it only if it is at least 10% faster.</source>
        <translation>{file} wird daneben als Entwurfsmodell geladen ({where}): Es schlägt einige Wörter auf einmal vor, und das Modell prüft sie gemeinsam. Dieses erste Laden misst, ob das auf diesem Computer schneller ist; Hearth behält es nur, wenn es mindestens 10 % schneller ist.</translation>
    </message>
    <message>
        <source>{file} loads beside it as a draft model ({where}): it proposes a few words at a time and the model checks them at once. Measured on this computer: replies come {gain:.2f}× as fast.</source>
        <translation>{file} wird daneben als Entwurfsmodell geladen ({where}): Es schlägt einige Wörter auf einmal vor, und das Modell prüft sie gemeinsam. Auf diesem Computer gemessen: Antworten kommen {gain:.2f}× so schnell.</translation>
    </message>
    <message>
        <source>{file} could draft for this model, but on this computer it made replies {gain:.2f}× as fast (measured), so it is left out.</source>
        <translation>{file} könnte für dieses Modell Entwürfe liefern, machte Antworten auf diesem Computer aber nur {gain:.2f}× so schnell (gemessen); es bleibt deshalb weg.</translation>
    </message>
    <message>
        <source>{file} looked like a draft for this model, but the runner found their tokens differ, so it is left out.</source>
        <translation>{file} sah wie ein Entwurfsmodell für dieses Modell aus, doch der Runner fand, dass ihre Tokens verschieden sind; es bleibt deshalb weg.</translation>
    </message>
    <message numerus="yes">
        <source>{file} could draft for this model, but it would take the room of %n layer(s) on the GPU, so it is left out.</source>
        <translation>
            <numerusform>{file} könnte für dieses Modell Entwürfe liefern, nähme aber den Platz von %n Schicht auf der GPU ein; es bleibt deshalb weg.</numerusform>
            <numerusform>{file} könnte für dieses Modell Entwürfe liefern, nähme aber den Platz von %n Schichten auf der GPU ein; es bleibt deshalb weg.</numerusform>
        </translation>
    </message>
    <message>
        <source>{file} could draft for this model, but it would take room the context needs, so it is left out.</source>
        <translation>{file} könnte für dieses Modell Entwürfe liefern, nähme aber Platz ein, den der Kontext braucht; es bleibt deshalb weg.</translation>
    </message>
    <message>
        <source>flash attention on</source>
        <translation>Flash Attention an</translation>
    </message>
    <message>
        <source>flash attention off</source>
        <translation>Flash Attention aus</translation>
    </message>
    <message>
        <source>{fa}, the KV cache as {cache_type} and micro-batches of {n_ubatch} tokens</source>
        <translation>{fa}, der KV-Cache als {cache_type} und Mikro-Batches von {n_ubatch} Tokens</translation>
    </message>
    <message>
        <source>Speed settings measured fastest for this model on this computer: {settings}. A typical turn ran {gain:.2f}× as fast as with the defaults.</source>
        <translation>Auf diesem Computer für dieses Modell als am schnellsten gemessen: {settings}. Ein typischer Wortwechsel lief {gain:.2f}× so schnell wie mit den Voreinstellungen.</translation>
    </message>
    <message>
        <source>On this computer {settings} measured {gain:.2f}× as fast, but here they would cost context or layers on the GPU, so the plan keeps its own.</source>
        <translation>Auf diesem Computer war {settings} gemessen {gain:.2f}× so schnell, würde hier aber Kontext oder Schichten auf der GPU kosten; der Plan behält deshalb seine eigenen Einstellungen.</translation>
    </message>
    <message numerus="yes">
        <source>%n core(s)</source>
        <translation>
            <numerusform>%n Kern</numerusform>
            <numerusform>%n Kerne</numerusform>
        </translation>
    </message>
    <message>
        <source>{cores:g} cores</source>
        <translation>{cores:g} Kerne</translation>
    </message>
    <message numerus="yes">
        <source>%n thread(s)</source>
        <translation>
            <numerusform>%n Thread</numerusform>
            <numerusform>%n Threads</numerusform>
        </translation>
    </message>
    <message>
        <source>{speed:g} with {threads}</source>
        <translation>{speed:g} mit {threads}</translation>
    </message>
    <message>
        <source>{threads} to start: the last load of this model with about {cores} busy measured tokens/s {speeds}.</source>
        <translation>{threads} zum Start: Beim letzten Laden dieses Modells, mit etwa {cores} ausgelastet, wurden Token/s {speeds} gemessen.</translation>
    </message>
    <message>
        <source>{threads} of {most} to start: other programs keep about {cores} busy now, and llama.cpp waits for its slowest thread at every step, so a thread sharing a core with them holds all the others back.</source>
        <translation>{threads} von {most} zum Start: Andere Programme lasten gerade etwa {cores} aus, und llama.cpp wartet bei jedem Schritt auf seinen langsamsten Thread, daher hält ein Thread, der sich einen Kern mit ihnen teilt, alle anderen auf.</translation>
    </message>
    <message>
        <source>{threads}: one per physical performance core (hyper-threads and efficiency cores slow generation down).</source>
        <translation>{threads}: einer pro physischem Performance-Kern (Hyper-Threads und Effizienz-Kerne verlangsamen die Generierung).</translation>
    </message>
    <message>
        <source>{why} Hearth measures at load which count up to {most} is fastest now, and measures again when another program starts or stops using the cores.</source>
        <translation>{why} Hearth misst beim Laden, welche Anzahl bis {most} gerade am schnellsten ist, und misst erneut, wenn ein anderes Programm beginnt oder aufhört, die Kerne zu nutzen.</translation>
    </message>
    <message>
        <source>Flash attention on.</source>
        <translation>Flash Attention an.</translation>
    </message>
    <message>
        <source>Flash attention on: it keeps the compute buffer at {on} instead of {off}.</source>
        <translation>Flash Attention an: Damit bleibt der Rechenpuffer bei {on} statt {off}.</translation>
    </message>
    <message>
        <source>Keeping {gpu} free on each GPU and {ram} of RAM for the system and other programs.</source>
        <translation>{gpu} auf jeder GPU und {ram} RAM werden für das System und andere Programme freigehalten.</translation>
    </message>
    <message>
        <source>Keeping {ram} of RAM for the system and other programs.</source>
        <translation>{ram} RAM werden für das System und andere Programme freigehalten.</translation>
    </message>
    <message>
        <source>{name}: {free} free, {reserve} kept back</source>
        <translation>{name}: {free} frei, {reserve} zurückgehalten</translation>
    </message>
    <message>
        <source>With the pinned {pins}, {model} needs {need} but this computer has {have} to spare ({budgets}). Unpin some settings or choose a smaller quantization.</source>
        <translation>Mit den festgelegten Werten {pins} braucht {model} {need}, dieser Computer hat aber nur {have} übrig ({budgets}). Heben Sie einige Festlegungen auf oder wählen Sie eine kleinere Quantisierung.</translation>
    </message>
    <message>
        <source>Even at the smallest settings, {model} needs {need} but this computer has {have} to spare ({budgets}). Choose a smaller model or quantization, or close other programs.</source>
        <translation>Selbst mit den kleinsten Einstellungen braucht {model} {need}, dieser Computer hat aber nur {have} übrig ({budgets}). Wählen Sie ein kleineres Modell oder eine kleinere Quantisierung, oder schließen Sie andere Programme.</translation>
    </message>
    <message>
        <source>The GPU reported an error; retrying on the CPU only.</source>
        <translation>Die GPU hat einen Fehler gemeldet; neuer Versuch nur auf der CPU.</translation>
    </message>
    <message>
        <source>Out of memory on the GPU: retrying on the CPU only.</source>
        <translation>Kein Speicher mehr auf der GPU: neuer Versuch nur auf der CPU.</translation>
    </message>
    <message>
        <source>layer {first}</source>
        <translation>Schicht {first}</translation>
    </message>
    <message>
        <source>layers {first}–{last}</source>
        <translation>Schichten {first}–{last}</translation>
    </message>
    <message>
        <source>the output layer</source>
        <translation>die Ausgabeschicht</translation>
    </message>
    <message>
        <source>{span} and the output layer</source>
        <translation>{span} und die Ausgabeschicht</translation>
    </message>
    <message>
        <source>this computer&apos;s {device}</source>
        <translation>{device} dieses Computers</translation>
    </message>
    <message>
        <source>{span} on {where}</source>
        <translation>{span} auf {where}</translation>
    </message>
    <message>
        <source>Split over several machines: {parts}.</source>
        <translation>Auf mehrere Rechner aufgeteilt: {parts}.</translation>
    </message>
    <message>
        <source>A worker stopped answering: loading again on this computer alone, without {workers}.</source>
        <translation>Ein Worker antwortet nicht mehr: Das Modell wird erneut nur auf diesem Computer geladen, ohne {workers}.</translation>
    </message>
    <message>
        <source>Runtime: {runtime}, {why}.</source>
        <translation>Laufzeitumgebung: {runtime}, {why}.</translation>
    </message>
    <message>
        <source>Runtime: {runtime}.</source>
        <translation>Laufzeitumgebung: {runtime}.</translation>
    </message>
    <message>
        <source>Running on the CPU, as asked.</source>
        <translation>Läuft wie gewünscht auf der CPU.</translation>
    </message>
    <message>
        <source>No GPU that llama.cpp can use was found, so the model runs on the CPU.</source>
        <translation>Es wurde keine GPU gefunden, die llama.cpp nutzen kann, daher läuft das Modell auf der CPU.</translation>
    </message>
    <message>
        <source>Context capped at {n_ctx} (the model supports {n_ctx_train}) to keep all {layers} layers on {where}.</source>
        <translation>Kontext auf {n_ctx} begrenzt (das Modell unterstützt {n_ctx_train}), damit alle {layers} Schichten auf {where} bleiben.</translation>
    </message>
    <message>
        <source>All {layers} layers fit on {where} with a context of {n_ctx}.</source>
        <translation>Alle {layers} Schichten passen mit einem Kontext von {n_ctx} auf {where}.</translation>
    </message>
    <message>
        <source>The {names} cannot hold even one layer at these settings, so the model runs on the CPU.</source>
        <translation>Die {names} kann bei diesen Einstellungen nicht einmal eine Schicht aufnehmen, daher läuft das Modell auf der CPU.</translation>
    </message>
    <message>
        <source>Expert tensors of the first {n_cpu_moe} layers stay in system RAM before any whole layer leaves the GPU.</source>
        <translation>Die Experten-Tensoren der ersten {n_cpu_moe} Schichten bleiben im System-RAM, bevor eine ganze Schicht die GPU verlässt.</translation>
    </message>
    <message>
        <source>This first load also measures which flash attention, KV cache type and micro-batch are fastest for this model on this computer: at most 5 seconds in the background once it is ready, set aside whenever you send a message. Later loads use the fastest.</source>
        <translation>Dieses erste Laden misst außerdem, welche Flash-Attention-Einstellung, welcher KV-Cache-Typ und welcher Mikro-Batch für dieses Modell auf diesem Computer am schnellsten sind: höchstens 5 Sekunden im Hintergrund, sobald es bereit ist, und unterbrochen, sobald Sie eine Nachricht senden. Spätere Ladevorgänge nutzen die schnellsten.</translation>
    </message>
    <message>
        <source>Measured on this computer: no other flash attention, KV cache type or micro-batch is faster for this model than these.</source>
        <translation>Auf diesem Computer gemessen: Keine andere Flash-Attention-Einstellung, kein anderer KV-Cache-Typ und kein anderer Mikro-Batch ist für dieses Modell schneller als diese.</translation>
    </message>
    <message>
        <source>The speed settings could not be measured for this model on this computer ({why}), so the plan uses its defaults.</source>
        <translation>Die Geschwindigkeitseinstellungen ließen sich für dieses Modell auf diesem Computer nicht messen ({why}); der Plan nutzt deshalb seine Voreinstellungen.</translation>
    </message>
    <message>
        <source>The dry run loaded the vision projector: its encoder takes {size} of working memory (estimated {estimate}), and the plan counts that.</source>
        <translation>Der Probelauf hat den Bild-Projektor geladen: Sein Encoder braucht {size} Arbeitsspeicher (geschätzt {estimate}), und der Plan rechnet damit.</translation>
    </message>
    <message>
        <source>{file} lies beside the model but is not loaded: {error}</source>
        <translation>{file} liegt neben dem Modell, wird aber nicht geladen: {error}</translation>
    </message>
    <message>
        <source>{file} lies beside the model but is made for a model {width} wide (this one is {n_embd}): it is not loaded, so the model cannot see images.</source>
        <translation>{file} liegt neben dem Modell, ist aber für ein Modell der Breite {width} gemacht (dieses hat {n_embd}): Er wird nicht geladen, das Modell kann also keine Bilder sehen.</translation>
    </message>
    <message>
        <source>Context set to {n_ctx} tokens (the model supports {n_ctx_train}): that is what fits in the memory that is left.</source>
        <translation>Kontext auf {n_ctx} Token gesetzt (das Modell unterstützt {n_ctx_train}): So viel passt in den verbleibenden Speicher.</translation>
    </message>
    <message>
        <source>Context {n_ctx} is beyond the {n_ctx_train} tokens the model was trained on; quality may drop past that.</source>
        <translation>Der Kontext {n_ctx} geht über die {n_ctx_train} Token hinaus, mit denen das Modell trainiert wurde; darüber kann die Qualität sinken.</translation>
    </message>
    <message>
        <source>Context kept at the floor of {n_ctx} tokens: less would make the model forget the conversation too soon.</source>
        <translation>Kontext auf dem Minimum von {n_ctx} Token gehalten: Bei weniger würde das Modell die Unterhaltung zu schnell vergessen.</translation>
    </message>
    <message>
        <source>Planned as if each GPU had {budget:,} MiB (--gpu-budget-mib): a test of partial offload, not the real size of the card.</source>
        <translation>So geplant, als hätte jede GPU {budget:,} MiB (--gpu-budget-mib): ein Test der teilweisen Auslagerung, nicht die echte Größe der Karte.</translation>
    </message>
    <message>
        <source>The {architecture} cache layout is estimated; the dry run checks it.</source>
        <translation>Das Cache-Layout von {architecture} ist geschätzt; der Probelauf prüft es.</translation>
    </message>
    <message>
        <source>Pinned by you: {pins}.</source>
        <translation>Von Ihnen festgelegt: {pins}.</translation>
    </message>
    <message>
        <source>A {cache_type_v} V cache needs flash attention, which is pinned &apos;{flash_attn}&apos;. Turn flash attention on or use an f16 V cache.</source>
        <translation>Ein {cache_type_v}-V-Cache braucht Flash Attention, die auf &apos;{flash_attn}&apos; festgelegt ist. Schalten Sie Flash Attention ein oder verwenden Sie einen f16-V-Cache.</translation>
    </message>
    <message>
        <source>Out of memory: retrying with a context of {n_ctx} instead of {was}.</source>
        <translation>Kein Speicher mehr: neuer Versuch mit einem Kontext von {n_ctx} statt {was}.</translation>
    </message>
    <message>
        <source>Out of memory: retrying with the KV cache stored as {cache_type}.</source>
        <translation>Kein Speicher mehr: neuer Versuch mit dem KV-Cache als {cache_type}.</translation>
    </message>
    <message>
        <source>Out of memory: retrying with {n_gpu_layers} layers on the GPU instead of {was}.</source>
        <translation>Kein Speicher mehr: neuer Versuch mit {n_gpu_layers} statt {was} Schichten auf der GPU.</translation>
    </message>
    <message>
        <source>Out of memory: retrying with every expert tensor in system RAM.</source>
        <translation>Kein Speicher mehr: neuer Versuch mit allen Experten-Tensoren im System-RAM.</translation>
    </message>
    <message>
        <source>Worker {endpoint} left out: {why}.</source>
        <translation>Worker {endpoint} ausgelassen: {why}.</translation>
    </message>
    <message>
        <source>Memory figures corrected by what an earlier load of this model measured ({corrections}).</source>
        <translation>Speicherwerte korrigiert anhand der Messung eines früheren Ladevorgangs dieses Modells ({corrections}).</translation>
    </message>
    <message>
        <source>The runner could not say which devices its build can use ({why}), so the plan is for the GPUs this computer has.</source>
        <translation>Der Runner konnte nicht angeben, welche Geräte sein Build nutzen kann ({why}), daher gilt der Plan für die GPUs, die dieser Computer hat.</translation>
    </message>
    <message>
        <source>Runtime {runtime} not used: {why}.</source>
        <translation>Laufzeitumgebung {runtime} nicht genutzt: {why}.</translation>
    </message>
    <message>
        <source>Checked with llama.cpp&apos;s dry run: the prediction matches.</source>
        <translation>Mit dem Probelauf von llama.cpp geprüft: Die Vorhersage stimmt.</translation>
    </message>
    <message>
        <source>Checked with llama.cpp&apos;s dry run, which corrected the first estimate ({corrections}).</source>
        <translation>Mit dem Probelauf von llama.cpp geprüft, der die erste Schätzung korrigiert hat ({corrections}).</translation>
    </message>
    <message>
        <source>llama.cpp&apos;s dry run still disagrees with the planner after correcting it ({corrections}); the plan keeps the corrected figures.</source>
        <translation>Der Probelauf von llama.cpp weicht auch nach der Korrektur noch vom Planer ab ({corrections}); der Plan behält die korrigierten Werte.</translation>
    </message>
    <message>
        <source>Not checked with llama.cpp&apos;s dry run: {why}.</source>
        <translation>Nicht mit dem Probelauf von llama.cpp geprüft: {why}.</translation>
    </message>
    <message>
        <source>Not checked with the dry run: the plan is for a recorded machine.</source>
        <translation>Nicht mit dem Probelauf geprüft: Der Plan gilt für einen aufgezeichneten Rechner.</translation>
    </message>
    <message>
        <source>its list of models</source>
        <translation>seine Modellliste</translation>
    </message>
    <message>
        <source>{name} answered {base_url}/models without a list of models. Check the address: it usually ends in /v1.</source>
        <translation>{name} hat auf {base_url}/models ohne Modellliste geantwortet. Prüfen Sie die Adresse: Sie endet meist auf /v1.</translation>
    </message>
    <message>
        <source> It said: {message}</source>
        <translation> Meldung des Servers: {message}</translation>
    </message>
    <message>
        <source>{name} refused the API key (HTTP 401). Check the key in Settings → Servers.{detail}</source>
        <translation>{name} hat den API-Schlüssel abgelehnt (HTTP 401). Prüfen Sie den Schlüssel unter Einstellungen → Server.{detail}</translation>
    </message>
    <message>
        <source>{name} refused access (HTTP 403): the key may not be allowed to use this.{detail}</source>
        <translation>{name} hat den Zugriff verweigert (HTTP 403): Der Schlüssel darf das vielleicht nicht nutzen.{detail}</translation>
    </message>
    <message>
        <source>{name} no longer offers the model “{model}”. Its list of models has been refreshed: pick another one.</source>
        <translation>{name} bietet das Modell „{model}“ nicht mehr an. Die Modellliste wurde aktualisiert: Wählen Sie ein anderes.</translation>
    </message>
    <message>
        <source>{name} has no OpenAI-compatible API at {where} (HTTP 404). Check the address in Settings → Servers: it usually ends in /v1.</source>
        <translation>{name} hat unter {where} keine OpenAI-kompatible API (HTTP 404). Prüfen Sie die Adresse unter Einstellungen → Server: Sie endet meist auf /v1.</translation>
    </message>
    <message>
        <source>{name} is busy or your quota is used up (HTTP 429). Try again later.{detail}</source>
        <translation>{name} ist ausgelastet oder Ihr Kontingent ist aufgebraucht (HTTP 429). Versuchen Sie es später noch einmal.{detail}</translation>
    </message>
    <message>
        <source>{name} had a problem of its own (HTTP {status}).{detail}</source>
        <translation>{name} hatte ein eigenes Problem (HTTP {status}).{detail}</translation>
    </message>
    <message>
        <source>{name} refused the request (HTTP {status}).{detail}</source>
        <translation>{name} hat die Anfrage abgelehnt (HTTP {status}).{detail}</translation>
    </message>
    <message>
        <source>{name} did not answer like an OpenAI-compatible API (it sent {ctype}). Check the address in Settings → Servers: it usually ends in /v1.</source>
        <translation>{name} hat nicht wie eine OpenAI-kompatible API geantwortet (gesendet wurde {ctype}). Prüfen Sie die Adresse unter Einstellungen → Server: Sie endet meist auf /v1.</translation>
    </message>
    <message>
        <source>no content type</source>
        <translation>kein Inhaltstyp</translation>
    </message>
    <message>
        <source>{name} sent {error} in one piece of its reply; Hearth stopped reading it there. Ask again, or check the server.</source>
        <translation>{name} hat in einem Teil seiner Antwort {error} gesendet; Hearth hat dort aufgehört zu lesen. Fragen Sie erneut oder prüfen Sie den Server.</translation>
    </message>
    <message>
        <source>{name} sent a piece of the reply that is not JSON.</source>
        <translation>{name} hat einen Teil der Antwort gesendet, der kein JSON ist.</translation>
    </message>
    <message>
        <source>{name} stopped the reply with an error: {message}</source>
        <translation>{name} hat die Antwort mit einem Fehler beendet: {message}</translation>
    </message>
    <message>
        <source>one reply</source>
        <translation>eine Antwort</translation>
    </message>
    <message>
        <source>{name} answered without a chat reply. Check the address in Settings → Servers: it usually ends in /v1.</source>
        <translation>{name} hat ohne Chat-Antwort geantwortet. Prüfen Sie die Adresse unter Einstellungen → Server: Sie endet meist auf /v1.</translation>
    </message>
    <message>
        <source>{name} sent more than {most} MiB as {what}; Hearth stopped reading it there. Check the server, or ask for a shorter reply.</source>
        <translation>{name} hat mehr als {most} MiB als {what} gesendet; Hearth hat dort aufgehört zu lesen. Prüfen Sie den Server oder bitten Sie um eine kürzere Antwort.</translation>
    </message>
    <message>
        <source>{name} did not answer like an OpenAI-compatible API (it sent {ctype}, not JSON). Check the address in Settings → Servers: it usually ends in /v1.</source>
        <translation>{name} hat nicht wie eine OpenAI-kompatible API geantwortet (gesendet wurde {ctype}, kein JSON). Prüfen Sie die Adresse unter Einstellungen → Server: Sie endet meist auf /v1.</translation>
    </message>
    <message>
        <source>The certificate of {name} ({host}) is not trusted: {why}. If this is your own server with a self-signed certificate, add it to this computer&apos;s trusted certificates, or use http:// on a network you trust.</source>
        <translation>Dem Zertifikat von {name} ({host}) wird nicht vertraut: {why}. Wenn das Ihr eigener Server mit einem selbst signierten Zertifikat ist, fügen Sie es den vertrauenswürdigen Zertifikaten dieses Computers hinzu oder verwenden Sie http:// in einem Netzwerk, dem Sie vertrauen.</translation>
    </message>
    <message>
        <source>{name} ({host}) did not answer within {seconds:.0f} s. Check that it is on and that this computer can reach its network.</source>
        <translation>{name} ({host}) hat nicht innerhalb von {seconds:.0f} s geantwortet. Prüfen Sie, ob der Server eingeschaltet ist und dieser Computer sein Netzwerk erreichen kann.</translation>
    </message>
    <message>
        <source>{name} stopped answering (no data for a long time). Try again; if it keeps happening, the server may be overloaded.</source>
        <translation>{name} antwortet nicht mehr (lange keine Daten). Versuchen Sie es erneut; wenn das weiter passiert, ist der Server vielleicht überlastet.</translation>
    </message>
    <message>
        <source>Hearth could not find the server “{host}” (the name does not resolve). Check the address and your network connection.</source>
        <translation>Hearth konnte den Server „{host}“ nicht finden (der Name lässt sich nicht auflösen). Prüfen Sie die Adresse und Ihre Netzwerkverbindung.</translation>
    </message>
    <message>
        <source>Nothing answers at {base_url}: {name} may be off, or listening on another port.</source>
        <translation>Unter {base_url} antwortet nichts: {name} ist vielleicht ausgeschaltet oder lauscht auf einem anderen Port.</translation>
    </message>
    <message>
        <source>{name} cannot be reached at {base_url} ({error}). Check the address and your network connection.</source>
        <translation>{name} ist unter {base_url} nicht erreichbar ({error}). Prüfen Sie die Adresse und Ihre Netzwerkverbindung.</translation>
    </message>
    <message>
        <source>The connection to {name} was lost during the reply. Try again.</source>
        <translation>Die Verbindung zu {name} ist während der Antwort abgebrochen. Versuchen Sie es erneut.</translation>
    </message>
    <message>
        <source>The connection to {name} was lost. Try again.</source>
        <translation>Die Verbindung zu {name} ist abgebrochen. Versuchen Sie es erneut.</translation>
    </message>
    <message>
        <source>Talking to {name} failed: {error}</source>
        <translation>Die Kommunikation mit {name} ist fehlgeschlagen: {error}</translation>
    </message>
    <message>
        <source>Hearth could not keep the server&apos;s API key: {detail} It is used until Hearth closes, and you will need to enter it again next time.</source>
        <translation>Hearth konnte den API-Schlüssel des Servers nicht speichern: {detail} Er wird verwendet, bis Hearth geschlossen wird, und Sie müssen ihn beim nächsten Mal erneut eingeben.</translation>
    </message>
    <message>
        <source>The API key has spaces or unusual characters: copy it again.</source>
        <translation>Der API-Schlüssel enthält Leerzeichen oder ungewöhnliche Zeichen: Kopieren Sie ihn erneut.</translation>
    </message>
    <message>
        <source>Enter the server&apos;s address, such as http://192.168.1.20:8080/v1.</source>
        <translation>Geben Sie die Adresse des Servers ein, etwa http://192.168.1.20:8080/v1.</translation>
    </message>
    <message>
        <source>The address cannot contain spaces.</source>
        <translation>Die Adresse darf keine Leerzeichen enthalten.</translation>
    </message>
    <message>
        <source>The address must start with http:// or https://, not {scheme}://.</source>
        <translation>Die Adresse muss mit http:// oder https:// beginnen, nicht mit {scheme}://.</translation>
    </message>
    <message>
        <source>The port in the address is not valid (1–65535).</source>
        <translation>Der Port in der Adresse ist ungültig (1–65535).</translation>
    </message>
    <message>
        <source>The address has no server name or IP address.</source>
        <translation>Die Adresse enthält keinen Servernamen und keine IP-Adresse.</translation>
    </message>
    <message>
        <source>Put the API key in the key field, not in the address.</source>
        <translation>Geben Sie den API-Schlüssel in das Schlüsselfeld ein, nicht in die Adresse.</translation>
    </message>
    <message>
        <source>The address cannot have a query (?…) or a fragment (#…).</source>
        <translation>Die Adresse darf keine Abfrage (?…) und kein Fragment (#…) enthalten.</translation>
    </message>
    <message>
        <source>Give the server a name, such as “Office PC”.</source>
        <translation>Geben Sie dem Server einen Namen, etwa „Büro-PC“.</translation>
    </message>
    <message>
        <source>The name is too long (at most {most} characters).</source>
        <translation>Der Name ist zu lang (höchstens {most} Zeichen).</translation>
    </message>
    <message>
        <source>A server is already called “{name}”: choose another name.</source>
        <translation>Es gibt schon einen Server namens „{name}“: Wählen Sie einen anderen Namen.</translation>
    </message>
    <message>
        <source>The runner did not list its devices within {timeout:g} s.</source>
        <translation>Der Runner hat seine Geräte nicht innerhalb von {timeout:g} s aufgelistet.</translation>
    </message>
    <message>
        <source>The runner could not be started: {error}</source>
        <translation>Der Runner konnte nicht gestartet werden: {error}</translation>
    </message>
    <message>
        <source>The runner did not answer with its devices: {detail}</source>
        <translation>Der Runner hat nicht mit seinen Geräten geantwortet: {detail}</translation>
    </message>
    <message>
        <source>The runner answered with something other than a device list.</source>
        <translation>Der Runner hat mit etwas anderem als einer Geräteliste geantwortet.</translation>
    </message>
    <message>
        <source>The runner at {url} answered a token count Hearth does not understand.</source>
        <translation>Der Runner unter {url} hat eine Tokenzählung geliefert, die Hearth nicht versteht.</translation>
    </message>
    <message>
        <source>The runner at {url} answered a search Hearth does not understand.</source>
        <translation>Der Runner unter {url} hat eine Suche beantwortet, die Hearth nicht versteht.</translation>
    </message>
    <message>
        <source>The runner sent {error} in one piece of its reply; Hearth stopped reading it. Restart the model.</source>
        <translation>Der Runner hat in einem Teil seiner Antwort {error} gesendet; Hearth hat aufgehört zu lesen. Starten Sie das Modell neu.</translation>
    </message>
    <message>
        <source>The runner sent a reply that is not JSON (HTTP {status}).</source>
        <translation>Der Runner hat eine Antwort gesendet, die kein JSON ist (HTTP {status}).</translation>
    </message>
    <message>
        <source>The runner sent an unexpected reply.</source>
        <translation>Der Runner hat eine unerwartete Antwort gesendet.</translation>
    </message>
    <message>
        <source>The runner refused Hearth&apos;s key. Another program may be using that port; restart the model.</source>
        <translation>Der Runner hat den Schlüssel von Hearth abgelehnt. Vielleicht verwendet ein anderes Programm diesen Port; starten Sie das Modell neu.</translation>
    </message>
    <message>
        <source>The runner answered HTTP {status}.</source>
        <translation>Der Runner hat mit HTTP {status} geantwortet.</translation>
    </message>
    <message>
        <source>The model runner is not answering at {base_url}. It may have stopped: load the model again.</source>
        <translation>Der Modell-Runner antwortet nicht unter {base_url}. Vielleicht wurde er beendet: Laden Sie das Modell erneut.</translation>
    </message>
    <message>
        <source>The model runner closed the connection (it may have crashed or been stopped). Load the model again to continue.</source>
        <translation>Der Modell-Runner hat die Verbindung geschlossen (er ist vielleicht abgestürzt oder wurde beendet). Laden Sie das Modell erneut, um fortzufahren.</translation>
    </message>
    <message>
        <source>Talking to the model runner failed: {error}</source>
        <translation>Die Kommunikation mit dem Modell-Runner ist fehlgeschlagen: {error}</translation>
    </message>
    <message>
        <source>its self-test could not start it: {error}</source>
        <translation>der Selbsttest konnte den Build nicht starten: {error}</translation>
    </message>
    <message>
        <source>its self-test found no device</source>
        <translation>der Selbsttest hat kein Gerät gefunden</translation>
    </message>
    <message>
        <source>{device} ({description}): {error}</source>
        <translation>{device} ({description}): {error}</translation>
    </message>
    <message>
        <source>no result</source>
        <translation>kein Ergebnis</translation>
    </message>
    <message>
        <source>its self-test failed on {devices}</source>
        <translation>der Selbsttest ist auf {devices} fehlgeschlagen</translation>
    </message>
    <message>
        <source>Chatting with {name} on this computer again.</source>
        <translation>Wieder im Chat mit {name} auf diesem Computer.</translation>
    </message>
    <message>
        <source>Unloading {name} first…</source>
        <translation>{name} wird zuerst entladen…</translation>
    </message>
    <message>
        <source>Connecting to {server}…</source>
        <translation>Verbindung mit {server} wird hergestellt…</translation>
    </message>
    <message>
        <source>the server</source>
        <translation>dem Server</translation>
    </message>
    <message>
        <source>The server of the model in use was removed; pick another model.</source>
        <translation>Der Server des verwendeten Modells wurde entfernt; wählen Sie ein anderes Modell.</translation>
    </message>
    <message>
        <source>The reply failed: {error}</source>
        <translation>Die Antwort ist fehlgeschlagen: {error}</translation>
    </message>
    <message>
        <source>Detected in {seconds:.2f} s</source>
        <translation>Erkannt in {seconds:.2f} s</translation>
    </message>
    <message>
        <source>{detected} · asking the runner…</source>
        <translation>{detected} · Runner wird abgefragt…</translation>
    </message>
    <message>
        <source>Hardware detection failed: {error}</source>
        <translation>Hardware-Erkennung fehlgeschlagen: {error}</translation>
    </message>
    <message>
        <source>Detection failed</source>
        <translation>Erkennung fehlgeschlagen</translation>
    </message>
    <message>
        <source>This computer&apos;s hardware could not be detected ({why}), so Hearth cannot say.</source>
        <translation>Die Hardware dieses Computers konnte nicht erkannt werden ({why}), daher kann Hearth nichts dazu sagen.</translation>
    </message>
    <message>
        <source>Using the token in the HF_TOKEN environment variable.</source>
        <translation>Das Token aus der Umgebungsvariable HF_TOKEN wird verwendet.</translation>
    </message>
    <message>
        <source>A token is saved in the system keyring.</source>
        <translation>Ein Token ist im Schlüsselbund des Systems gespeichert.</translation>
    </message>
    <message>
        <source>A token is saved. {where}</source>
        <translation>Ein Token ist gespeichert. {where}</translation>
    </message>
    <message>
        <source>No token: public models work without one; gated models (Llama, Gemma, …) need one.</source>
        <translation>Kein Token: Öffentliche Modelle funktionieren ohne; zugangsbeschränkte Modelle (Llama, Gemma, …) brauchen eines.</translation>
    </message>
    <message>
        <source>Not loaded: {error}</source>
        <translation>Nicht geladen: {error}</translation>
    </message>
    <message>
        <source>Could not look for models: {error}</source>
        <translation>Suche nach Modellen nicht möglich: {error}</translation>
    </message>
    <message>
        <source>Could not remember the folder {folder}: {error}</source>
        <translation>Der Ordner {folder} konnte nicht gespeichert werden: {error}</translation>
    </message>
    <message>
        <source>{path} is no longer in the library; press Rescan.</source>
        <translation>{path} ist nicht mehr in der Bibliothek; lassen Sie erneut nach Modellen suchen.</translation>
    </message>
    <message>
        <source>That server is no longer in Settings → Servers.</source>
        <translation>Dieser Server ist nicht mehr unter Einstellungen → Server.</translation>
    </message>
    <message>
        <source>The list of servers could not be saved ({error}); it applies until Hearth closes.</source>
        <translation>Die Serverliste konnte nicht gespeichert werden ({error}); sie gilt, bis Hearth geschlossen wird.</translation>
    </message>
    <message numerus="yes">
        <source>Connected: %n model(s) ({names}).</source>
        <translation>
            <numerusform>Verbunden: %n Modell ({names}).</numerusform>
            <numerusform>Verbunden: %n Modelle ({names}).</numerusform>
        </translation>
    </message>
    <message>
        <source>Connected, but the server lists no models.</source>
        <translation>Verbunden, aber der Server führt keine Modelle auf.</translation>
    </message>
    <message>
        <source>Checking the server failed: {error}</source>
        <translation>Die Prüfung des Servers ist fehlgeschlagen: {error}</translation>
    </message>
    <message>
        <source>No model is loaded.</source>
        <translation>Es ist kein Modell geladen.</translation>
    </message>
    <message>
        <source>The model runner could not be started ({program}). Reinstall Hearth.</source>
        <translation>Der Modell-Runner konnte nicht gestartet werden ({program}). Installieren Sie Hearth neu.</translation>
    </message>
    <message>
        <source>it crashed</source>
        <translation>er ist abgestürzt</translation>
    </message>
    <message>
        <source>The model runner stopped unexpectedly: {reason}.</source>
        <translation>Der Modell-Runner wurde unerwartet beendet: {reason}.</translation>
    </message>
    <message>
        <source>The model runner exited (code {code}).</source>
        <translation>Der Modell-Runner wurde beendet (Code {code}).</translation>
    </message>
    <message>
        <source>the conversations</source>
        <translation>die Unterhaltungen</translation>
    </message>
    <message>
        <source>the conversation</source>
        <translation>die Unterhaltung</translation>
    </message>
    <message>
        <source>Could not write {path}: {error}. Choose another folder, or free some space.</source>
        <translation>{path} konnte nicht geschrieben werden: {error}. Wählen Sie einen anderen Ordner oder schaffen Sie Platz.</translation>
    </message>
    <message>
        <source>an unexpected error (the details are in the log)</source>
        <translation>ein unerwarteter Fehler (die Details stehen im Log)</translation>
    </message>
    <message>
        <source>Could not read {what}. {why}</source>
        <translation>Hearth konnte {what} nicht lesen. {why}</translation>
    </message>
    <message>
        <source>The settings were not saved: {error}</source>
        <translation>Die Einstellungen wurden nicht gespeichert: {error}</translation>
    </message>
    <message>
        <source>Could not open the model for tuning: {error}</source>
        <translation>Das Modell konnte nicht zum Einstellen geöffnet werden: {error}</translation>
    </message>
    <message>
        <source>{endpoint} is already in the list.</source>
        <translation>{endpoint} ist schon in der Liste.</translation>
    </message>
    <message>
        <source>Added {endpoint}: the next load may put layers on it. Checking it…</source>
        <translation>{endpoint} hinzugefügt: Beim nächsten Laden können Schichten darauf liegen. Wird geprüft…</translation>
    </message>
    <message>
        <source>The worker list could not be saved ({error}); it applies until Hearth closes.</source>
        <translation>Die Worker-Liste konnte nicht gespeichert werden ({error}); sie gilt, bis Hearth geschlossen wird.</translation>
    </message>
    <message>
        <source>The workers could not be checked: {error}</source>
        <translation>Die Worker konnten nicht geprüft werden: {error}</translation>
    </message>
    <message>
        <source>This computer&apos;s worker stopped: {why}</source>
        <translation>Der Worker dieses Computers wurde beendet: {why}</translation>
    </message>
    <message>
        <source>it exited with code {code}</source>
        <translation>er wurde mit Code {code} beendet</translation>
    </message>
    <message>
        <source>it could not start</source>
        <translation>er konnte nicht starten</translation>
    </message>
    <message>
        <source>Hearth&apos;s library of conversations was damaged, so Hearth set it aside and started a new, empty one.</source>
        <translation>Die Bibliothek der Unterhaltungen von Hearth war beschädigt, daher hat Hearth sie beiseitegelegt und eine neue, leere angelegt.</translation>
    </message>
    <message>
        <source>The damaged file is now {moved}; nothing in it was deleted. The conversations saved before are in that file: a recovery tool (for example the sqlite3 program&apos;s .recover command) may get them back. What was wrong: {detail}.</source>
        <translation>Die beschädigte Datei heißt jetzt {moved}; nichts darin wurde gelöscht. Die zuvor gespeicherten Unterhaltungen sind in dieser Datei: Ein Wiederherstellungswerkzeug (zum Beispiel der Befehl .recover des Programms sqlite3) kann sie vielleicht zurückholen. Was nicht stimmte: {detail}.</translation>
    </message>
    <message>
        <source>The damaged file is now {moved}; nothing in it was deleted. The conversations saved before are in that file: a recovery tool (for example the sqlite3 program&apos;s .recover command) may get them back.</source>
        <translation>Die beschädigte Datei heißt jetzt {moved}; nichts darin wurde gelöscht. Die zuvor gespeicherten Unterhaltungen sind in dieser Datei: Ein Wiederherstellungswerkzeug (zum Beispiel der Befehl .recover des Programms sqlite3) kann sie vielleicht zurückholen.</translation>
    </message>
    <message>
        <source>{headline} {details}</source>
        <translation>{headline} {details}</translation>
    </message>
    <message>
        <source>open its library</source>
        <translation>seine Bibliothek zu öffnen</translation>
    </message>
    <message>
        <source>Hearth could not create the folder for its library, {parent} ({error}). Check that you may write there.</source>
        <translation>Hearth konnte den Ordner für seine Bibliothek, {parent}, nicht anlegen ({error}). Prüfen Sie, ob Sie dort schreiben dürfen.</translation>
    </message>
    <message>
        <source>{damage} Hearth could not set it aside itself ({error}).</source>
        <translation>{damage} Hearth konnte sie nicht selbst beiseitelegen ({error}).</translation>
    </message>
    <message>
        <source>The library at {path} was written by a newer version of Hearth (schema version {found}; this version understands up to {known}). Update Hearth to open it; nothing in it was changed.</source>
        <translation>Die Bibliothek unter {path} wurde von einer neueren Version von Hearth geschrieben (Schemaversion {found}; diese Version versteht bis {known}). Aktualisieren Sie Hearth, um sie zu öffnen; darin wurde nichts geändert.</translation>
    </message>
    <message>
        <source>Hearth could not {action}: the library file {path} is damaged or is not a Hearth database ({detail}). Quit Hearth and start it again: at start it sets a damaged library aside (nothing in it is deleted) and begins a new one. If this message comes back, move the file (with any {name}-wal and {name}-shm beside it) to another folder yourself, or restore it from a backup.</source>
        <translation>Es ist Hearth nicht gelungen, {action}: Die Bibliotheksdatei {path} ist beschädigt oder keine Hearth-Datenbank ({detail}). Beenden Sie Hearth und starten Sie es erneut: Beim Start legt es eine beschädigte Bibliothek beiseite (darin wird nichts gelöscht) und beginnt eine neue. Wenn diese Meldung wiederkommt, verschieben Sie die Datei (mit allen {name}-wal und {name}-shm daneben) selbst in einen anderen Ordner oder stellen Sie sie aus einer Sicherung wieder her.</translation>
    </message>
    <message>
        <source>The disk is full: Hearth could not {action}. Free some space; nothing already saved is lost.</source>
        <translation>Der Datenträger ist voll: Es ist Hearth nicht gelungen, {action}. Schaffen Sie Platz; nichts bereits Gespeichertes geht verloren.</translation>
    </message>
    <message>
        <source>Hearth could not {action}: the library file {path} is in use by another program (perhaps a second Hearth). Close the other program and try again; nothing already saved is lost.</source>
        <translation>Es ist Hearth nicht gelungen, {action}: Die Bibliotheksdatei {path} wird von einem anderen Programm verwendet (vielleicht einem zweiten Hearth). Schließen Sie das andere Programm und versuchen Sie es erneut; nichts bereits Gespeichertes geht verloren.</translation>
    </message>
    <message>
        <source>Hearth could not {action}: the library file {path} cannot be written ({detail}). Check that the disk is not read-only and that you may write to that folder.</source>
        <translation>Es ist Hearth nicht gelungen, {action}: Die Bibliotheksdatei {path} kann nicht geschrieben werden ({detail}). Prüfen Sie, ob der Datenträger schreibgeschützt ist und ob Sie in diesen Ordner schreiben dürfen.</translation>
    </message>
    <message>
        <source>Hearth could not {action}: the library file {path} cannot be opened ({detail}). Check that the folder exists and that you may write to it.</source>
        <translation>Es ist Hearth nicht gelungen, {action}: Die Bibliotheksdatei {path} kann nicht geöffnet werden ({detail}). Prüfen Sie, ob der Ordner existiert und ob Sie hineinschreiben dürfen.</translation>
    </message>
    <message>
        <source>Hearth could not {action}: reading or writing the library file {path} failed ({detail}). Check that the disk is connected and healthy, then try again; nothing already saved is lost.</source>
        <translation>Es ist Hearth nicht gelungen, {action}: Das Lesen oder Schreiben der Bibliotheksdatei {path} ist fehlgeschlagen ({detail}). Prüfen Sie, ob der Datenträger angeschlossen und in Ordnung ist, und versuchen Sie es dann erneut; nichts bereits Gespeichertes geht verloren.</translation>
    </message>
    <message>
        <source>import an old conversation</source>
        <translation>eine alte Unterhaltung zu importieren</translation>
    </message>
    <message>
        <source>import the recent models list</source>
        <translation>die Liste der zuletzt verwendeten Modelle zu importieren</translation>
    </message>
    <message>
        <source>Hearth keeps its keys in the system keyring.</source>
        <translation>Hearth speichert seine Schlüssel im Schlüsselbund des Systems.</translation>
    </message>
    <message>
        <source>This computer has no system keyring, so Hearth keeps its keys in {path}, a file only your user account can read.</source>
        <translation>Dieser Computer hat keinen Schlüsselbund, daher speichert Hearth seine Schlüssel in {path}, einer Datei, die nur Ihr Benutzerkonto lesen kann.</translation>
    </message>
    <message>
        <source>Hearth&apos;s keys in {path} cannot be read: {error}.</source>
        <translation>Die Schlüssel von Hearth in {path} können nicht gelesen werden: {error}.</translation>
    </message>
    <message>
        <source>Hearth&apos;s keys in {path} are damaged (not JSON): move the file away and enter the keys again.</source>
        <translation>Die Schlüssel von Hearth in {path} sind beschädigt (kein JSON): Verschieben Sie die Datei an einen anderen Ort und geben Sie die Schlüssel erneut ein.</translation>
    </message>
    <message>
        <source>Hearth&apos;s keys in {path} are not in a form Hearth knows: move the file away and enter the keys again.</source>
        <translation>Die Schlüssel von Hearth in {path} haben ein Format, das Hearth nicht kennt: Verschieben Sie die Datei an einen anderen Ort und geben Sie die Schlüssel erneut ein.</translation>
    </message>
    <message>
        <source>Hearth&apos;s keys could not be saved in {path}: {error}.</source>
        <translation>Die Schlüssel von Hearth konnten nicht in {path} gespeichert werden: {error}.</translation>
    </message>
    <message>
        <source>The system keyring could not read the key ({detail}). If it is locked, unlock it and try again.</source>
        <translation>Der Schlüsselbund des Systems konnte den Schlüssel nicht lesen ({detail}). Wenn er gesperrt ist, entsperren Sie ihn und versuchen Sie es erneut.</translation>
    </message>
    <message>
        <source>The system keyring could not keep the key ({detail}). If it is locked, unlock it and try again.</source>
        <translation>Der Schlüsselbund des Systems konnte den Schlüssel nicht speichern ({detail}). Wenn er gesperrt ist, entsperren Sie ihn und versuchen Sie es erneut.</translation>
    </message>
    <message>
        <source>The system keyring could not delete the key ({detail}). If it is locked, unlock it and try again.</source>
        <translation>Der Schlüsselbund des Systems konnte den Schlüssel nicht löschen ({detail}). Wenn er gesperrt ist, entsperren Sie ihn und versuchen Sie es erneut.</translation>
    </message>
    <message>
        <source>This model&apos;s chat template knows no tools, so the tools turned on in Settings → Tools are not offered to it. A model made for tool calling (Qwen, Llama 3.1, Mistral) can use them.</source>
        <translation>Die Chat-Vorlage dieses Modells kennt keine Werkzeuge, daher werden ihm die unter Einstellungen → Werkzeuge eingeschalteten Werkzeuge nicht angeboten. Ein Modell für Werkzeugaufrufe (Qwen, Llama 3.1, Mistral) kann sie nutzen.</translation>
    </message>
    <message>
        <source>Images are not sent to a server&apos;s model (whether it sees images is not known); they stay with the message.</source>
        <translation>Bilder werden nicht an das Modell eines Servers gesendet (ob es Bilder sieht, ist nicht bekannt); sie bleiben bei der Nachricht.</translation>
    </message>
    <message>
        <source>The loaded model cannot see images: no vision projector (an mmproj file) lies beside it. The images stay with the message for a model that can.</source>
        <translation>Das geladene Modell kann keine Bilder sehen: Neben ihm liegt kein Bild-Projektor (eine mmproj-Datei). Die Bilder bleiben bei der Nachricht, für ein Modell, das sie sehen kann.</translation>
    </message>
    <message>
        <source>Pick a GGUF model above and press Load to start chatting.</source>
        <translation>Wählen Sie oben ein GGUF-Modell und drücken Sie „Laden“, um zu chatten.</translation>
    </message>
    <message>
        <source>Copied the code.</source>
        <translation>Code kopiert.</translation>
    </message>
    <message>
        <source>Copied the message.</source>
        <translation>Nachricht kopiert.</translation>
    </message>
    <message>
        <source>Editing your message: Send asks it as a new version (the old one and its replies are kept). Esc cancels.</source>
        <translation>Sie bearbeiten Ihre Nachricht: „Senden“ schickt sie als neue Version ab (die alte und ihre Antworten bleiben erhalten). Esc bricht ab.</translation>
    </message>
    <message>
        <source>Type a message. Enter sends, Shift+Enter for a new line.</source>
        <translation>Nachricht eingeben. Die Eingabetaste sendet, Umschalt+Eingabetaste beginnt eine neue Zeile.</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>Nachricht</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>Senden</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>Stoppen</translation>
    </message>
    <message>
        <source>Stop the reply; what it wrote so far is kept</source>
        <translation>Antwort stoppen; was bisher geschrieben wurde, bleibt erhalten</translation>
    </message>
    <message>
        <source>Continue</source>
        <translation>Fortsetzen</translation>
    </message>
    <message>
        <source>Let the model go on with its last reply, which was cut</source>
        <translation>Das Modell seine letzte, abgeschnittene Antwort fortsetzen lassen</translation>
    </message>
    <message>
        <source>Attach documents or images to your next message: text, Markdown, code, PDF, DOCX, HTML; PNG, JPEG, WebP, GIF. An image can also be pasted (Ctrl+V).</source>
        <translation>Dokumente oder Bilder an Ihre nächste Nachricht anhängen: Text, Markdown, Code, PDF, DOCX, HTML; PNG, JPEG, WebP, GIF. Ein Bild lässt sich auch einfügen (Strg+V).</translation>
    </message>
    <message>
        <source>The model is ready. Say hello.</source>
        <translation>Das Modell ist bereit. Sagen Sie Hallo.</translation>
    </message>
    <message>
        <source>{model} on {server} is ready. Say hello.</source>
        <translation>{model} auf {server} ist bereit. Sagen Sie Hallo.</translation>
    </message>
    <message>
        <source>This conversation was written with {name}; it goes on with the model in use now unless you switch.</source>
        <translation>Diese Unterhaltung wurde mit {name} geführt; sie geht mit dem jetzt verwendeten Modell weiter, wenn Sie nicht wechseln.</translation>
    </message>
    <message>
        <source>Reading the attached documents… {done} of {total}</source>
        <translation>Die angehängten Dokumente werden gelesen … {done} von {total}</translation>
    </message>
    <message>
        <source>Reading the attached documents…</source>
        <translation>Die angehängten Dokumente werden gelesen …</translation>
    </message>
    <message>
        <source>Wait for the reply to finish, or press Stop.</source>
        <translation>Warten Sie, bis die Antwort fertig ist, oder drücken Sie „Stoppen“.</translation>
    </message>
    <message>
        <source>Load a model to regenerate the reply.</source>
        <translation>Laden Sie ein Modell, um die Antwort neu zu erzeugen.</translation>
    </message>
    <message>
        <source>no limit</source>
        <translation>keine Grenze</translation>
    </message>
    <message>
        <source>random</source>
        <translation>zufällig</translation>
    </message>
    <message>
        <source>none</source>
        <translation>keine</translation>
    </message>
    <message>
        <source>Conversation settings</source>
        <translation>Einstellungen der Unterhaltung</translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation>Systemprompt</translation>
    </message>
    <message>
        <source>Instructions the model reads before the conversation. Empty: none.</source>
        <translation>Anweisungen, die das Modell vor der Unterhaltung liest. Leer: keine.</translation>
    </message>
    <message>
        <source>None. For example: You are a concise assistant.</source>
        <translation>Keine. Zum Beispiel: Du bist ein Assistent, der sich kurz fasst.</translation>
    </message>
    <message>
        <source>Preset</source>
        <translation>Voreinstellung</translation>
    </message>
    <message>
        <source>Fills the sampling settings with a style. Max tokens and the seed are kept.</source>
        <translation>Füllt die Sampling-Einstellungen mit einem Stil. Max. Token und der Seed bleiben erhalten.</translation>
    </message>
    <message>
        <source>Custom</source>
        <translation>Benutzerdefiniert</translation>
    </message>
    <message>
        <source>Settings error</source>
        <translation>Fehler in den Einstellungen</translation>
    </message>
    <message>
        <source>Reset to model defaults</source>
        <translation>Auf Modellstandards zurücksetzen</translation>
    </message>
    <message>
        <source>Reset sampling to the model&apos;s defaults</source>
        <translation>Sampling auf die Standards des Modells zurücksetzen</translation>
    </message>
    <message>
        <source>Empties every sampling setting, so the model&apos;s own defaults apply. The system prompt is kept.</source>
        <translation>Leert alle Sampling-Einstellungen, sodass die eigenen Standards des Modells gelten. Der Systemprompt bleibt erhalten.</translation>
    </message>
    <message>
        <source>model default: {value}</source>
        <translation>Modellstandard: {value}</translation>
    </message>
    <message>
        <source>Model default: {value} (from the model file).</source>
        <translation>Modellstandard: {value} (aus der Modelldatei).</translation>
    </message>
    <message>
        <source>Model default: {value} (llama.cpp&apos;s default; the model file names none).</source>
        <translation>Modellstandard: {value} (Standard von llama.cpp; die Modelldatei nennt keinen).</translation>
    </message>
    <message>
        <source>Model default: {value}.</source>
        <translation>Modellstandard: {value}.</translation>
    </message>
    <message>
        <source>Range: {low} to {high}.</source>
        <translation>Bereich: {low} bis {high}.</translation>
    </message>
    <message>
        <source>Reply speed</source>
        <translation>Antwortgeschwindigkeit</translation>
    </message>
    <message>
        <source>Context used</source>
        <translation>Genutzter Kontext</translation>
    </message>
    <message>
        <source>{used} of the model&apos;s {size} context tokens are taken by this conversation (its messages and the last reply).</source>
        <translation>{used} der {size} Kontext-Token des Modells belegt diese Unterhaltung (ihre Nachrichten und die letzte Antwort).</translation>
    </message>
    <message>
        <source>You</source>
        <translation>Sie</translation>
    </message>
    <message>
        <source>Assistant</source>
        <translation>Assistent</translation>
    </message>
    <message>
        <source>System</source>
        <translation>System</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>Kopieren</translation>
    </message>
    <message>
        <source>Code</source>
        <translation>Code</translation>
    </message>
    <message>
        <source>[image]</source>
        <translation>[Bild]</translation>
    </message>
    <message>
        <source>[image: {alt}]</source>
        <translation>[Bild: {alt}]</translation>
    </message>
    <message>
        <source>Thinking… ({count} characters)</source>
        <translation>Denkt nach… ({count} Zeichen)</translation>
    </message>
    <message>
        <source>Reasoning ({count} characters)</source>
        <translation>Überlegungen ({count} Zeichen)</translation>
    </message>
    <message>
        <source>Show all ({count} characters)</source>
        <translation>Alles anzeigen ({count} Zeichen)</translation>
    </message>
    <message>
        <source>Show all in a window ({count} characters)</source>
        <translation>Alles in einem Fenster anzeigen ({count} Zeichen)</translation>
    </message>
    <message>
        <source>Show less</source>
        <translation>Weniger anzeigen</translation>
    </message>
    <message>
        <source>{speed} tokens/s</source>
        <translation>{speed} Token/s</translation>
    </message>
    <message>
        <source>{source} (sent whole: the server does not stream)</source>
        <translation>{source} (als Ganzes gesendet: Der Server streamt nicht)</translation>
    </message>
    <message>
        <source>With this message:</source>
        <translation>Mit dieser Nachricht:</translation>
    </message>
    <message>
        <source>{name} (whole)</source>
        <translation>{name} (vollständig)</translation>
    </message>
    <message>
        <source>1 passage from {name}</source>
        <translation>1 Abschnitt aus {name}</translation>
    </message>
    <message>
        <source>{count} passages from {name}</source>
        <translation>{count} Abschnitte aus {name}</translation>
    </message>
    <message>
        <source>page {number}</source>
        <translation>Seite {number}</translation>
    </message>
    <message>
        <source>Tool {name}: {status}</source>
        <translation>Werkzeug {name}: {status}</translation>
    </message>
    <message>
        <source>waiting for your answer</source>
        <translation>wartet auf Ihre Antwort</translation>
    </message>
    <message>
        <source>running…</source>
        <translation>läuft…</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>fehlgeschlagen</translation>
    </message>
    <message>
        <source>not allowed</source>
        <translation>nicht erlaubt</translation>
    </message>
    <message>
        <source>took too long</source>
        <translation>dauerte zu lange</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>abgebrochen</translation>
    </message>
    <message>
        <source>no such tool</source>
        <translation>kein solches Werkzeug</translation>
    </message>
    <message>
        <source>Arguments</source>
        <translation>Argumente</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>Ergebnis</translation>
    </message>
    <message>
        <source>Stopped.</source>
        <translation>Angehalten.</translation>
    </message>
    <message>
        <source>The reply reached its length limit.</source>
        <translation>Die Antwort hat ihre Längenbegrenzung erreicht.</translation>
    </message>
    <message>
        <source>The window was closed during this reply.</source>
        <translation>Das Fenster wurde während dieser Antwort geschlossen.</translation>
    </message>
    <message>
        <source>The reply failed.</source>
        <translation>Die Antwort ist fehlgeschlagen.</translation>
    </message>
    <message>
        <source>The model runner stopped during this reply. Restart the model to continue; the conversation is kept.</source>
        <translation>Der Modell-Runner wurde während dieser Antwort beendet. Starten Sie das Modell neu, um fortzufahren; die Unterhaltung bleibt erhalten.</translation>
    </message>
    <message>
        <source>Message actions</source>
        <translation>Aktionen für die Nachricht</translation>
    </message>
    <message>
        <source>Copy the message</source>
        <translation>Nachricht kopieren</translation>
    </message>
    <message>
        <source>Edit this message and send it again</source>
        <translation>Diese Nachricht bearbeiten und erneut senden</translation>
    </message>
    <message>
        <source>Write this reply again</source>
        <translation>Diese Antwort neu schreiben</translation>
    </message>
    <message>
        <source>Previous version</source>
        <translation>Vorherige Version</translation>
    </message>
    <message>
        <source>Next version</source>
        <translation>Nächste Version</translation>
    </message>
    <message>
        <source>Version {at} of {count}</source>
        <translation>Version {at} von {count}</translation>
    </message>
    <message>
        <source>Conversation</source>
        <translation>Unterhaltung</translation>
    </message>
    <message>
        <source>Alt+Up and Alt+Down move between the messages; Tab then reaches the message&apos;s actions.</source>
        <translation>Alt+Pfeil nach oben und Alt+Pfeil nach unten wechseln zwischen den Nachrichten; mit Tab erreichen Sie dann die Aktionen der Nachricht.</translation>
    </message>
    <message>
        <source>Your message ({count} characters)</source>
        <translation>Ihre Nachricht ({count} Zeichen)</translation>
    </message>
    <message>
        <source>The reply ({count} characters)</source>
        <translation>Die Antwort ({count} Zeichen)</translation>
    </message>
    <message>
        <source>Pinned</source>
        <translation>Angeheftet</translation>
    </message>
    <message>
        <source>Today</source>
        <translation>Heute</translation>
    </message>
    <message>
        <source>Yesterday</source>
        <translation>Gestern</translation>
    </message>
    <message>
        <source>Previous 7 days</source>
        <translation>Letzte 7 Tage</translation>
    </message>
    <message>
        <source>Older</source>
        <translation>Älter</translation>
    </message>
    <message numerus="yes">
        <source>%n message(s)</source>
        <translation>
            <numerusform>%n Nachricht</numerusform>
            <numerusform>%n Nachrichten</numerusform>
        </translation>
    </message>
    <message>
        <source>Untitled</source>
        <translation>Ohne Titel</translation>
    </message>
    <message>
        <source>Rename conversation</source>
        <translation>Unterhaltung umbenennen</translation>
    </message>
    <message>
        <source>Export conversation</source>
        <translation>Unterhaltung exportieren</translation>
    </message>
    <message>
        <source>Pin to top</source>
        <translation>Oben anheften</translation>
    </message>
    <message>
        <source>More actions</source>
        <translation>Weitere Aktionen</translation>
    </message>
    <message>
        <source>Unpin</source>
        <translation>Nicht mehr anheften</translation>
    </message>
    <message>
        <source>Chats</source>
        <translation>Chats</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>Neuer Chat</translation>
    </message>
    <message>
        <source>Search conversations</source>
        <translation>Unterhaltungen durchsuchen</translation>
    </message>
    <message>
        <source>Search titles and messages</source>
        <translation>Titel und Nachrichten durchsuchen</translation>
    </message>
    <message>
        <source>Conversations</source>
        <translation>Unterhaltungen</translation>
    </message>
    <message>
        <source>No conversations yet</source>
        <translation>Noch keine Unterhaltungen</translation>
    </message>
    <message>
        <source>Your chats are kept here, on this computer.</source>
        <translation>Ihre Chats werden hier gespeichert, auf diesem Computer.</translation>
    </message>
    <message>
        <source>New name:</source>
        <translation>Neuer Name:</translation>
    </message>
    <message>
        <source>Delete conversation</source>
        <translation>Unterhaltung löschen</translation>
    </message>
    <message numerus="yes">
        <source>Delete “{title}” and its %n message(s)? This cannot be undone.</source>
        <translation>
            <numerusform>„{title}“ und %n Nachricht löschen? Das kann nicht rückgängig gemacht werden.</numerusform>
            <numerusform>„{title}“ und die %n Nachrichten löschen? Das kann nicht rückgängig gemacht werden.</numerusform>
        </translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>Löschen</translation>
    </message>
    <message>
        <source>JSON (*.json)</source>
        <translation>JSON (*.json)</translation>
    </message>
    <message>
        <source>Markdown (*.md)</source>
        <translation>Markdown (*.md)</translation>
    </message>
    <message>
        <source>No matches.</source>
        <translation>Keine Treffer.</translation>
    </message>
    <message>
        <source>No conversations yet.</source>
        <translation>Noch keine Unterhaltungen.</translation>
    </message>
    <message>
        <source>Rename…</source>
        <translation>Umbenennen…</translation>
    </message>
    <message>
        <source>Export as Markdown…</source>
        <translation>Als Markdown exportieren…</translation>
    </message>
    <message>
        <source>Export as JSON…</source>
        <translation>Als JSON exportieren…</translation>
    </message>
    <message>
        <source>Delete…</source>
        <translation>Löschen…</translation>
    </message>
    <message>
        <source>Trending</source>
        <translation>Im Trend</translation>
    </message>
    <message>
        <source>Most downloads</source>
        <translation>Meiste Downloads</translation>
    </message>
    <message>
        <source>Most likes</source>
        <translation>Meiste Likes</translation>
    </message>
    <message>
        <source>Recently updated</source>
        <translation>Zuletzt aktualisiert</translation>
    </message>
    <message>
        <source>Searching for “{query}”…</source>
        <translation>Suche nach „{query}“…</translation>
    </message>
    <message>
        <source>Loading the repository…</source>
        <translation>Repository wird geladen…</translation>
    </message>
    <message>
        <source>Search Hugging Face for GGUF models (e.g. llama 8b)</source>
        <translation>Hugging Face nach GGUF-Modellen durchsuchen (z. B. llama 8b)</translation>
    </message>
    <message>
        <source>Search Hugging Face</source>
        <translation>Hugging Face durchsuchen</translation>
    </message>
    <message>
        <source>Order of the results</source>
        <translation>Reihenfolge der Ergebnisse</translation>
    </message>
    <message>
        <source>Search</source>
        <translation>Suchen</translation>
    </message>
    <message>
        <source>Token…</source>
        <translation>Token…</translation>
    </message>
    <message>
        <source>Hugging Face token…</source>
        <translation>Hugging-Face-Token…</translation>
    </message>
    <message>
        <source>A Hugging Face token for gated models, kept in the system keyring</source>
        <translation>Ein Hugging-Face-Token für zugangsbeschränkte Modelle, gespeichert im Schlüsselbund des Systems</translation>
    </message>
    <message>
        <source>Retry</source>
        <translation>Erneut versuchen</translation>
    </message>
    <message>
        <source>Search results</source>
        <translation>Suchergebnisse</translation>
    </message>
    <message>
        <source>Load more</source>
        <translation>Mehr laden</translation>
    </message>
    <message>
        <source>Show recommended models</source>
        <translation>Empfohlene Modelle anzeigen</translation>
    </message>
    <message>
        <source>Results</source>
        <translation>Ergebnisse</translation>
    </message>
    <message>
        <source>Pick a model</source>
        <translation>Modell wählen</translation>
    </message>
    <message>
        <source>Pick a recommended model or a search result to see its files and whether each one fits this computer.</source>
        <translation>Wählen Sie ein empfohlenes Modell oder ein Suchergebnis, um seine Dateien zu sehen und ob jede davon auf diesen Computer passt.</translation>
    </message>
    <message>
        <source>No models found</source>
        <translation>Keine Modelle gefunden</translation>
    </message>
    <message>
        <source>No GGUF models match “{query}”. Try fewer or other words.</source>
        <translation>Keine GGUF-Modelle passen zu „{query}“. Versuchen Sie es mit weniger oder anderen Wörtern.</translation>
    </message>
    <message>
        <source>No models found.</source>
        <translation>Keine Modelle gefunden.</translation>
    </message>
    <message>
        <source>*This repository has no model card.*</source>
        <translation>*Dieses Repository hat keine Modellkarte.*</translation>
    </message>
    <message>
        <source>Hugging Face cannot be reached. Press Retry; models already on this computer keep working.</source>
        <translation>Hugging Face ist nicht erreichbar. Drücken Sie „Erneut versuchen“; Modelle, die schon auf diesem Computer sind, funktionieren weiter.</translation>
    </message>
    <message>
        <source>Hugging Face cannot be reached.</source>
        <translation>Hugging Face ist nicht erreichbar.</translation>
    </message>
    <message>
        <source>No results</source>
        <translation>Keine Ergebnisse</translation>
    </message>
    <message>
        <source>Hugging Face cannot be reached. Retry above, or use the recommended models.</source>
        <translation>Hugging Face ist nicht erreichbar. Versuchen Sie es oben erneut oder nutzen Sie die empfohlenen Modelle.</translation>
    </message>
    <message>
        <source>The repository could not be loaded: Hugging Face cannot be reached.</source>
        <translation>Das Repository konnte nicht geladen werden: Hugging Face ist nicht erreichbar.</translation>
    </message>
    <message>
        <source>The search did not work; the reason is above.</source>
        <translation>Die Suche hat nicht funktioniert; der Grund steht oben.</translation>
    </message>
    <message>
        <source>The repository could not be loaded.</source>
        <translation>Das Repository konnte nicht geladen werden.</translation>
    </message>
    <message>
        <source>Loading…</source>
        <translation>Wird geladen…</translation>
    </message>
    <message>
        <source>{name} is queued: see Downloads.</source>
        <translation>{name} ist in der Warteschlange: siehe Downloads.</translation>
    </message>
    <message>
        <source>License: {license}</source>
        <translation>Lizenz: {license}</translation>
    </message>
    <message>
        <source>License: not stated</source>
        <translation>Lizenz: nicht angegeben</translation>
    </message>
    <message>
        <source>Gated: you must accept its terms on Hugging Face</source>
        <translation>Zugangsbeschränkt: Sie müssen die Bedingungen auf Hugging Face akzeptieren</translation>
    </message>
    <message>
        <source>Not gated</source>
        <translation>Nicht zugangsbeschränkt</translation>
    </message>
    <message>
        <source>Architecture: {name}</source>
        <translation>Architektur: {name}</translation>
    </message>
    <message>
        <source>{count} parameters</source>
        <translation>{count} Parameter</translation>
    </message>
    <message>
        <source>trained for {tokens} context</source>
        <translation>trainiert für {tokens} Kontext</translation>
    </message>
    <message>
        <source>{downloads} downloads · {likes} likes</source>
        <translation>{downloads} Downloads · {likes} Likes</translation>
    </message>
    <message>
        <source>updated {date}</source>
        <translation>aktualisiert {date}</translation>
    </message>
    <message>
        <source>{size}/s</source>
        <translation>{size}/s</translation>
    </message>
    <message>
        <source>{seconds} s</source>
        <translation>{seconds} s</translation>
    </message>
    <message>
        <source>{minutes} min</source>
        <translation>{minutes} min</translation>
    </message>
    <message>
        <source>{hours} h {minutes} min</source>
        <translation>{hours} h {minutes} min</translation>
    </message>
    <message>
        <source>{hours} h</source>
        <translation>{hours} h</translation>
    </message>
    <message>
        <source>{done} of {total}</source>
        <translation>{done} von {total}</translation>
    </message>
    <message>
        <source>Failed.</source>
        <translation>Fehlgeschlagen.</translation>
    </message>
    <message>
        <source>Done · {size} · in the library</source>
        <translation>Fertig · {size} · in der Bibliothek</translation>
    </message>
    <message>
        <source>Paused · {amount} · {why}</source>
        <translation>Pausiert · {amount} · {why}</translation>
    </message>
    <message>
        <source>Paused · {amount}</source>
        <translation>Pausiert · {amount}</translation>
    </message>
    <message>
        <source>Waiting · {amount}</source>
        <translation>Wartet · {amount}</translation>
    </message>
    <message>
        <source>Waiting to start</source>
        <translation>Wartet auf den Start</translation>
    </message>
    <message>
        <source>{amount} · {phase}</source>
        <translation>{amount} · {phase}</translation>
    </message>
    <message>
        <source>{time} left</source>
        <translation>noch {time}</translation>
    </message>
    <message numerus="yes">
        <source>%n finished</source>
        <translation>
            <numerusform>%n fertig</numerusform>
            <numerusform>%n fertig</numerusform>
        </translation>
    </message>
    <message>
        <source>No downloads in progress</source>
        <translation>Keine laufenden Downloads</translation>
    </message>
    <message numerus="yes">
        <source>%n active</source>
        <translation>
            <numerusform>%n aktiv</numerusform>
            <numerusform>%n aktiv</numerusform>
        </translation>
    </message>
    <message>
        <source>{done} so far</source>
        <translation>{done} bisher</translation>
    </message>
    <message>
        <source>Pause</source>
        <translation>Pausieren</translation>
    </message>
    <message>
        <source>Resume</source>
        <translation>Fortsetzen</translation>
    </message>
    <message>
        <source>Cancel and delete what was downloaded</source>
        <translation>Abbrechen und bisher Heruntergeladenes löschen</translation>
    </message>
    <message>
        <source>Progress of {title}</source>
        <translation>Fortschritt von {title}</translation>
    </message>
    <message>
        <source>Pause {title}</source>
        <translation>{title} pausieren</translation>
    </message>
    <message>
        <source>Resume {title}</source>
        <translation>{title} fortsetzen</translation>
    </message>
    <message>
        <source>Retry {title}</source>
        <translation>{title} erneut versuchen</translation>
    </message>
    <message>
        <source>Cancel {title}</source>
        <translation>{title} abbrechen</translation>
    </message>
    <message>
        <source>Downloads</source>
        <translation>Downloads</translation>
    </message>
    <message>
        <source>No downloads</source>
        <translation>Keine Downloads</translation>
    </message>
    <message>
        <source>Find a model in Discover and press Download. Downloads survive closing Hearth and resume where they stopped.</source>
        <translation>Suchen Sie unter „Entdecken“ ein Modell und drücken Sie „Herunterladen“. Downloads überstehen das Schließen von Hearth und werden dort fortgesetzt, wo sie aufgehört haben.</translation>
    </message>
    <message>
        <source>Discover models</source>
        <translation>Modelle entdecken</translation>
    </message>
    <message>
        <source>Cancel {title} and delete the {size} downloaded so far? It would have to start again from the beginning.</source>
        <translation>{title} abbrechen und die bisher heruntergeladenen {size} löschen? Der Download müsste dann wieder ganz von vorn beginnen.</translation>
    </message>
    <message>
        <source>Cancel {title}? It would have to start again from the beginning.</source>
        <translation>{title} abbrechen? Der Download müsste dann wieder ganz von vorn beginnen.</translation>
    </message>
    <message>
        <source>Cancel the download?</source>
        <translation>Download abbrechen?</translation>
    </message>
    <message>
        <source>Cancel download</source>
        <translation>Download abbrechen</translation>
    </message>
    <message>
        <source>Keep downloading</source>
        <translation>Weiter herunterladen</translation>
    </message>
    <message>
        <source>Download queue</source>
        <translation>Download-Warteschlange</translation>
    </message>
    <message>
        <source>{title} failed.</source>
        <translation>{title} ist fehlgeschlagen.</translation>
    </message>
    <message>
        <source>{title} failed: {sentence}</source>
        <translation>{title} fehlgeschlagen: {sentence}</translation>
    </message>
    <message>
        <source>A download failed: {sentence}</source>
        <translation>Ein Download ist fehlgeschlagen: {sentence}</translation>
    </message>
    <message>
        <source>Add a folder of GGUF models</source>
        <translation>Einen Ordner mit GGUF-Modellen hinzufügen</translation>
    </message>
    <message>
        <source>{tokens} context</source>
        <translation>{tokens} Kontext</translation>
    </message>
    <message>
        <source>Quantization</source>
        <translation>Quantisierung</translation>
    </message>
    <message>
        <source>{source} · {folder}</source>
        <translation>{source} · {folder}</translation>
    </message>
    <message>
        <source>In Hearth&apos;s models folder</source>
        <translation>Im Modellordner von Hearth</translation>
    </message>
    <message>
        <source>Belongs to {source}: Hearth lists it but does not delete it</source>
        <translation>Gehört zu {source}: Hearth führt es auf, löscht es aber nicht</translation>
    </message>
    <message>
        <source>Cannot be used</source>
        <translation>Nicht verwendbar</translation>
    </message>
    <message>
        <source>Not checked yet</source>
        <translation>Noch nicht geprüft</translation>
    </message>
    <message>
        <source>Hearth has not yet worked out how this model fits this computer</source>
        <translation>Hearth hat noch nicht ermittelt, wie dieses Modell auf diesen Computer passt</translation>
    </message>
    <message>
        <source>Load {name} in chat</source>
        <translation>{name} im Chat laden</translation>
    </message>
    <message>
        <source>Load</source>
        <translation>Laden</translation>
    </message>
    <message>
        <source>Offload settings…</source>
        <translation>Offload-Einstellungen…</translation>
    </message>
    <message>
        <source>Show in folder</source>
        <translation>Im Ordner anzeigen</translation>
    </message>
    <message>
        <source>Verify against the download&apos;s checksum</source>
        <translation>Mit der Prüfsumme des Downloads abgleichen</translation>
    </message>
    <message>
        <source>Delete this model from Hearth&apos;s folder</source>
        <translation>Dieses Modell aus dem Ordner von Hearth löschen</translation>
    </message>
    <message>
        <source>Only models in Hearth&apos;s own folder can be deleted here; this one belongs to {source}.</source>
        <translation>Hier können nur Modelle im eigenen Ordner von Hearth gelöscht werden; dieses gehört zu {source}.</translation>
    </message>
    <message>
        <source>Models on this computer</source>
        <translation>Modelle auf diesem Computer</translation>
    </message>
    <message>
        <source>Scanning for models</source>
        <translation>Suche nach Modellen</translation>
    </message>
    <message>
        <source>Scanning…</source>
        <translation>Wird durchsucht…</translation>
    </message>
    <message>
        <source>Sort by</source>
        <translation>Sortieren nach</translation>
    </message>
    <message>
        <source>Sort models by</source>
        <translation>Modelle sortieren nach</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>Größe</translation>
    </message>
    <message>
        <source>Where found</source>
        <translation>Fundort</translation>
    </message>
    <message>
        <source>Fit</source>
        <translation>Passung</translation>
    </message>
    <message>
        <source>Source</source>
        <translation>Quelle</translation>
    </message>
    <message>
        <source>Also list the GGUF models in a folder of your choice</source>
        <translation>Auch die GGUF-Modelle in einem Ordner Ihrer Wahl auflisten</translation>
    </message>
    <message>
        <source>Add folder…</source>
        <translation>Ordner hinzufügen…</translation>
    </message>
    <message>
        <source>Where Hearth downloads models to (the only folder Hearth ever deletes from)</source>
        <translation>Wohin Hearth Modelle herunterlädt (der einzige Ordner, in dem Hearth jemals etwas löscht)</translation>
    </message>
    <message>
        <source>Download folder…</source>
        <translation>Download-Ordner…</translation>
    </message>
    <message>
        <source>Look for models again (in every known place)</source>
        <translation>Erneut nach Modellen suchen (an allen bekannten Orten)</translation>
    </message>
    <message>
        <source>No models yet</source>
        <translation>Noch keine Modelle</translation>
    </message>
    <message>
        <source>Find a model in Discover, or open a GGUF file you already have. “Add folder…” lists every GGUF model in a folder.</source>
        <translation>Suchen Sie unter „Entdecken“ ein Modell oder öffnen Sie eine GGUF-Datei, die Sie schon haben. „Ordner hinzufügen…“ listet alle GGUF-Modelle in einem Ordner auf.</translation>
    </message>
    <message>
        <source>Open GGUF file…</source>
        <translation>GGUF-Datei öffnen…</translation>
    </message>
    <message numerus="yes">
        <source>%n model(s) · {size}</source>
        <translation>
            <numerusform>%n Modell · {size}</numerusform>
            <numerusform>%n Modelle · {size}</numerusform>
        </translation>
    </message>
    <message>
        <source>Verifying {name}…</source>
        <translation>{name} wird geprüft…</translation>
    </message>
    <message>
        <source>Delete the model?</source>
        <translation>Modell löschen?</translation>
    </message>
    <message>
        <source>Delete {name} ({size}) from this computer? It would have to be downloaded again.</source>
        <translation>{name} ({size}) von diesem Computer löschen? Es müsste erneut heruntergeladen werden.</translation>
    </message>
    <message>
        <source>{name}: {sentence}</source>
        <translation>{name}: {sentence}</translation>
    </message>
    <message>
        <source>Could not save the conversation: {error}</source>
        <translation>Die Unterhaltung konnte nicht gespeichert werden: {error}</translation>
    </message>
    <message>
        <source>Exported to {path}.</source>
        <translation>Exportiert nach {path}.</translation>
    </message>
    <message>
        <source>Chat</source>
        <translation>Chat</translation>
    </message>
    <message>
        <source>About Hearth</source>
        <translation>Über Hearth</translation>
    </message>
    <message>
        <source>Runs open language models on this computer. It plans how each model fits your hardware and says why; your conversations stay here.</source>
        <translation>Führt offene Sprachmodelle auf diesem Computer aus. Es plant, wie jedes Modell auf Ihre Hardware passt, und sagt, warum; Ihre Unterhaltungen bleiben hier.</translation>
    </message>
    <message>
        <source>Choose a model in the list first.</source>
        <translation>Wählen Sie zuerst ein Modell in der Liste.</translation>
    </message>
    <message>
        <source>Send the message</source>
        <translation>Nachricht senden</translation>
    </message>
    <message>
        <source>Enter</source>
        <translation>Eingabetaste</translation>
    </message>
    <message>
        <source>New line in the message</source>
        <translation>Neue Zeile in der Nachricht</translation>
    </message>
    <message>
        <source>Shift+Enter</source>
        <translation>Umschalt+Eingabetaste</translation>
    </message>
    <message>
        <source>Leave the message box</source>
        <translation>Nachrichtenfeld verlassen</translation>
    </message>
    <message>
        <source>Tab</source>
        <translation>Tab</translation>
    </message>
    <message>
        <source>Does not fit</source>
        <translation>Passt nicht</translation>
    </message>
    <message>
        <source>Memory of {device}</source>
        <translation>Speicher von {device}</translation>
    </message>
    <message>
        <source>This model (weights)</source>
        <translation>Dieses Modell (Gewichte)</translation>
    </message>
    <message>
        <source>Its context (KV cache)</source>
        <translation>Sein Kontext (KV-Cache)</translation>
    </message>
    <message>
        <source>Working memory</source>
        <translation>Rechenpuffer</translation>
    </message>
    <message>
        <source>GPU driver&apos;s own</source>
        <translation>Eigenbedarf des GPU-Treibers</translation>
    </message>
    <message>
        <source>Shared with the GPU</source>
        <translation>Mit der GPU geteilt</translation>
    </message>
    <message>
        <source>Other programs</source>
        <translation>Andere Programme</translation>
    </message>
    <message>
        <source>The model&apos;s weights, read from its file.</source>
        <translation>Die Gewichte des Modells, aus seiner Datei gelesen.</translation>
    </message>
    <message>
        <source>What the model remembers of the conversation; it grows with the context length.</source>
        <translation>Was sich das Modell von der Unterhaltung merkt; wächst mit der Kontextlänge.</translation>
    </message>
    <message>
        <source>Scratch space llama.cpp computes in (the compute buffers).</source>
        <translation>Zwischenspeicher, in dem llama.cpp rechnet (die Rechenpuffer).</translation>
    </message>
    <message>
        <source>What the GPU&apos;s driver and libraries take for themselves (context, cuBLAS).</source>
        <translation>Was der Treiber und die Bibliotheken der GPU für sich selbst belegen (Kontext, cuBLAS).</translation>
    </message>
    <message>
        <source>The part that lets the model see images (its mmproj file) and the memory it encodes an image in.</source>
        <translation>Der Teil, mit dem das Modell Bilder sieht (seine mmproj-Datei), und der Speicher, in dem er ein Bild kodiert.</translation>
    </message>
    <message>
        <source>A small model of the same family that proposes a few words at a time for this one to check (speculative decoding), with its own context.</source>
        <translation>Ein kleines Modell derselben Familie, das einige Wörter auf einmal vorschlägt, die dieses Modell prüft (spekulatives Dekodieren), mit eigenem Kontext.</translation>
    </message>
    <message>
        <source>Memory a GPU uses that is system RAM (Apple Silicon, an integrated GPU).</source>
        <translation>Speicher einer GPU, der System-RAM ist (Apple Silicon, eine integrierte GPU).</translation>
    </message>
    <message>
        <source>What other programs used when the memory was last read.</source>
        <translation>Was andere Programme belegt hatten, als der Speicher zuletzt ausgelesen wurde.</translation>
    </message>
    <message>
        <source>Left free for the system and your other programs.</source>
        <translation>Frei gelassen für das System und Ihre anderen Programme.</translation>
    </message>
    <message>
        <source>What the last load really allocated (a dashed line on the bar).</source>
        <translation>Was das letzte Laden wirklich belegt hat (eine gestrichelte Linie im Balken).</translation>
    </message>
    <message>
        <source>Measured after load</source>
        <translation>Nach dem Laden gemessen</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>&amp;Datei</translation>
    </message>
    <message>
        <source>Choose a model file anywhere on this computer</source>
        <translation>Eine Modelldatei irgendwo auf diesem Computer auswählen</translation>
    </message>
    <message>
        <source>Settings…</source>
        <translation>Einstellungen…</translation>
    </message>
    <message>
        <source>Models folders, Hugging Face token, sharing, theme</source>
        <translation>Modellordner, Hugging-Face-Token, Freigabe, Design</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>Beenden</translation>
    </message>
    <message>
        <source>Unload the model and close Hearth</source>
        <translation>Das Modell entladen und Hearth schließen</translation>
    </message>
    <message>
        <source>&amp;Model</source>
        <translation>&amp;Modell</translation>
    </message>
    <message>
        <source>Choose model…</source>
        <translation>Modell auswählen…</translation>
    </message>
    <message>
        <source>Open the list of models; arrows pick, Enter chooses</source>
        <translation>Die Modellliste öffnen; Pfeiltasten wählen aus, Eingabetaste übernimmt</translation>
    </message>
    <message>
        <source>Load the model chosen in the list</source>
        <translation>Das in der Liste gewählte Modell laden</translation>
    </message>
    <message>
        <source>Unload</source>
        <translation>Entladen</translation>
    </message>
    <message>
        <source>Stop the model and free its memory</source>
        <translation>Das Modell stoppen und seinen Speicher freigeben</translation>
    </message>
    <message>
        <source>GPU layers, context, batch, threads and KV cache for the chosen model</source>
        <translation>GPU-Schichten, Kontext, Batch, Threads und KV-Cache für das gewählte Modell</translation>
    </message>
    <message>
        <source>Vision projector…</source>
        <translation>Bild-Projektor…</translation>
    </message>
    <message>
        <source>Choose the mmproj file the chosen model loads with, to see images (one beside the model loads by itself)</source>
        <translation>Die mmproj-Datei wählen, mit der das gewählte Modell geladen wird, damit es Bilder sieht (eine neben dem Modell wird von selbst geladen)</translation>
    </message>
    <message>
        <source>&amp;Chat</source>
        <translation>&amp;Chat</translation>
    </message>
    <message>
        <source>Start an empty conversation with the model in use</source>
        <translation>Eine leere Unterhaltung mit dem verwendeten Modell beginnen</translation>
    </message>
    <message>
        <source>Find a conversation by its words</source>
        <translation>Eine Unterhaltung anhand ihrer Wörter finden</translation>
    </message>
    <message>
        <source>Stop reply</source>
        <translation>Antwort stoppen</translation>
    </message>
    <message>
        <source>Stop the reply (what it wrote is kept), or stop editing a message</source>
        <translation>Die Antwort stoppen (was geschrieben wurde, bleibt erhalten) oder das Bearbeiten einer Nachricht beenden</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>&amp;Hilfe</translation>
    </message>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>Tastenkürzel</translation>
    </message>
    <message>
        <source>Every key this window answers</source>
        <translation>Alle Tasten, auf die dieses Fenster reagiert</translation>
    </message>
    <message>
        <source>Remote</source>
        <translation>Remote</translation>
    </message>
    <message>
        <source>Ready</source>
        <translation>Bereit</translation>
    </message>
    <message>
        <source>Failed</source>
        <translation>Fehlgeschlagen</translation>
    </message>
    <message>
        <source>No model</source>
        <translation>Kein Modell</translation>
    </message>
    <message>
        <source>Unload: stop the model and free its memory</source>
        <translation>Entladen: das Modell stoppen und seinen Speicher freigeben</translation>
    </message>
    <message>
        <source>Loading progress</source>
        <translation>Ladefortschritt</translation>
    </message>
    <message>
        <source>Chat settings</source>
        <translation>Chat-Einstellungen</translation>
    </message>
    <message>
        <source>Chat settings: system prompt and sampling for this conversation</source>
        <translation>Chat-Einstellungen: Systemprompt und Sampling für diese Unterhaltung</translation>
    </message>
    <message>
        <source>Model status</source>
        <translation>Modellstatus</translation>
    </message>
    <message>
        <source>Restart model</source>
        <translation>Modell neu starten</translation>
    </message>
    <message>
        <source>Restart</source>
        <translation>Neu starten</translation>
    </message>
    <message>
        <source>Load the same model again with the settings that worked; the conversation is kept.</source>
        <translation>Dasselbe Modell mit den Einstellungen erneut laden, die funktioniert haben; die Unterhaltung bleibt erhalten.</translation>
    </message>
    <message>
        <source>Why these settings?</source>
        <translation>Warum diese Einstellungen?</translation>
    </message>
    <message>
        <source>Why?</source>
        <translation>Warum?</translation>
    </message>
    <message>
        <source>Why these settings? The plan&apos;s reasons, step by step</source>
        <translation>Warum diese Einstellungen? Die Gründe des Plans, Schritt für Schritt</translation>
    </message>
    <message>
        <source>Why these settings</source>
        <translation>Warum diese Einstellungen</translation>
    </message>
    <message>
        <source>Find the instruct version</source>
        <translation>Die Instruct-Version finden</translation>
    </message>
    <message>
        <source>Offload settings</source>
        <translation>Offload-Einstellungen</translation>
    </message>
    <message>
        <source>Offload settings: GPU layers, context, batch, threads, KV cache for this model on this computer, with the memory each takes</source>
        <translation>Offload-Einstellungen: GPU-Schichten, Kontext, Batch, Threads und KV-Cache für dieses Modell auf diesem Computer, mit dem Speicher, den jede Einstellung belegt</translation>
    </message>
    <message>
        <source>Open a GGUF model</source>
        <translation>Ein GGUF-Modell öffnen</translation>
    </message>
    <message>
        <source>GGUF models (*.gguf);;All files (*)</source>
        <translation>GGUF-Modelle (*.gguf);;Alle Dateien (*)</translation>
    </message>
    <message>
        <source>{model} runs on {server} ({url}). Use checks that the server has it, then your messages go there.</source>
        <translation>{model} läuft auf {server} ({url}). „Verwenden“ prüft, ob der Server es hat; dann gehen Ihre Nachrichten dorthin.</translation>
    </message>
    <message>
        <source>{name} is loaded on this computer; Use chats with it again.</source>
        <translation>{name} ist auf diesem Computer geladen; mit „Verwenden“ chatten Sie wieder damit.</translation>
    </message>
    <message>
        <source>{name}: {verdict}. Load switches to it; the settings are checked again with a dry run first.</source>
        <translation>{name}: {verdict}. „Laden“ wechselt zu diesem Modell; die Einstellungen werden vorher erneut mit einem Probelauf geprüft.</translation>
    </message>
    <message>
        <source>{name}: {verdict}. Load; the settings are checked again with a dry run first.</source>
        <translation>{name}: {verdict}. „Laden“; die Einstellungen werden vorher erneut mit einem Probelauf geprüft.</translation>
    </message>
    <message>
        <source>{name}: Load switches to it; how it runs on this computer is planned first, then checked with a dry run.</source>
        <translation>{name}: „Laden“ wechselt zu diesem Modell; wie es auf diesem Computer läuft, wird zuerst geplant und dann mit einem Probelauf geprüft.</translation>
    </message>
    <message>
        <source>{name}: Load; how it runs on this computer is planned first, then checked with a dry run.</source>
        <translation>{name}: „Laden“; wie es auf diesem Computer läuft, wird zuerst geplant und dann mit einem Probelauf geprüft.</translation>
    </message>
    <message>
        <source>Use</source>
        <translation>Verwenden</translation>
    </message>
    <message>
        <source>Switch</source>
        <translation>Wechseln</translation>
    </message>
    <message>
        <source>Model: {state}</source>
        <translation>Modell: {state}</translation>
    </message>
    <message>
        <source>Chatting with {model} on {server} (remote). Replies come from that server; nothing runs on this computer for them.</source>
        <translation>Chat mit {model} auf {server} (Remote). Die Antworten kommen von diesem Server; auf diesem Computer läuft dafür nichts.</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>Modell</translation>
    </message>
    <message>
        <source>Choose the model to chat with</source>
        <translation>Das Modell wählen, mit dem Sie chatten</translation>
    </message>
    <message>
        <source>{name} (loaded)</source>
        <translation>{name} (geladen)</translation>
    </message>
    <message>
        <source>Loaded</source>
        <translation>Geladen</translation>
    </message>
    <message>
        <source>{model}  —  {verdict}</source>
        <translation>{model}  —  {verdict}</translation>
    </message>
    <message>
        <source>from {app}</source>
        <translation>von {app}</translation>
    </message>
    <message>
        <source>in Hearth&apos;s models folder</source>
        <translation>im Modellordner von Hearth</translation>
    </message>
    <message>
        <source>in {folder}</source>
        <translation>in {folder}</translation>
    </message>
    <message>
        <source>{model}  —  remote: {server} (in use)</source>
        <translation>{model}  —  Remote: {server} (in Verwendung)</translation>
    </message>
    <message>
        <source>{model}  —  remote: {server}</source>
        <translation>{model}  —  Remote: {server}</translation>
    </message>
    <message>
        <source>{model} on {server} ({url}).
Replies come from that server; nothing runs on this computer for them.</source>
        <translation>{model} auf {server} ({url}).
Die Antworten kommen von diesem Server; auf diesem Computer läuft dafür nichts.</translation>
    </message>
    <message>
        <source>on {server}</source>
        <translation>auf {server}</translation>
    </message>
    <message>
        <source>In use</source>
        <translation>In Verwendung</translation>
    </message>
    <message>
        <source>Offload settings: {name}</source>
        <translation>Offload-Einstellungen: {name}</translation>
    </message>
    <message>
        <source>GPU layers</source>
        <translation>GPU-Schichten</translation>
    </message>
    <message>
        <source>Context (tokens)</source>
        <translation>Kontext (Token)</translation>
    </message>
    <message>
        <source>Batch</source>
        <translation>Batch</translation>
    </message>
    <message>
        <source>Micro-batch</source>
        <translation>Micro-Batch</translation>
    </message>
    <message>
        <source>Threads (generation)</source>
        <translation>Threads (Generierung)</translation>
    </message>
    <message>
        <source>Threads (prompt)</source>
        <translation>Threads (Prompt)</translation>
    </message>
    <message>
        <source>Flash attention</source>
        <translation>Flash Attention</translation>
    </message>
    <message>
        <source>KV cache type, K</source>
        <translation>KV-Cache-Typ, K</translation>
    </message>
    <message>
        <source>KV cache type, V</source>
        <translation>KV-Cache-Typ, V</translation>
    </message>
    <message>
        <source>Memory-map the file</source>
        <translation>Datei per Memory-Mapping einbinden</translation>
    </message>
    <message>
        <source>Lock in RAM</source>
        <translation>Im RAM festhalten</translation>
    </message>
    <message>
        <source>GPUs and split</source>
        <translation>GPUs und Aufteilung</translation>
    </message>
    <message>
        <source>Experts on the CPU</source>
        <translation>Experten auf der CPU</translation>
    </message>
    <message>
        <source>Layers on the GPUs (the output layer counts as one): more is faster, and takes GPU memory.</source>
        <translation>Schichten auf den GPUs (die Ausgabeschicht zählt als eine): mehr ist schneller und belegt GPU-Speicher.</translation>
    </message>
    <message>
        <source>How many tokens the model keeps in mind; the KV cache grows with it.</source>
        <translation>Wie viele Token das Modell im Blick behält; der KV-Cache wächst damit.</translation>
    </message>
    <message>
        <source>Prompt tokens handed to llama.cpp at once.</source>
        <translation>Prompt-Token, die llama.cpp auf einmal übergeben werden.</translation>
    </message>
    <message>
        <source>Tokens computed at once; the compute buffers grow with it.</source>
        <translation>Token, die auf einmal berechnet werden; die Rechenpuffer wachsen damit.</translation>
    </message>
    <message>
        <source>CPU threads while generating.</source>
        <translation>CPU-Threads beim Generieren.</translation>
    </message>
    <message>
        <source>CPU threads while reading the prompt.</source>
        <translation>CPU-Threads beim Lesen des Prompts.</translation>
    </message>
    <message>
        <source>Smaller compute buffers; needed for a quantized V cache.</source>
        <translation>Kleinere Rechenpuffer; nötig für einen quantisierten V-Cache.</translation>
    </message>
    <message>
        <source>q8_0 halves the K cache at a small cost in quality.</source>
        <translation>q8_0 halbiert den K-Cache bei geringen Qualitätseinbußen.</translation>
    </message>
    <message>
        <source>q8_0 halves the V cache; needs flash attention.</source>
        <translation>q8_0 halbiert den V-Cache; braucht Flash Attention.</translation>
    </message>
    <message>
        <source>Read the weights from the file as needed instead of copying them into RAM.</source>
        <translation>Die Gewichte bei Bedarf aus der Datei lesen, statt sie in den RAM zu kopieren.</translation>
    </message>
    <message>
        <source>Keep the weights in RAM so the system never swaps them out.</source>
        <translation>Die Gewichte im RAM halten, damit das System sie nie auslagert.</translation>
    </message>
    <message>
        <source>Which GPUs hold layers, and in what proportion.</source>
        <translation>Welche GPUs Schichten aufnehmen und in welchem Verhältnis.</translation>
    </message>
    <message>
        <source>The expert tensors of the first N layers stay in system RAM.</source>
        <translation>Die Experten-Tensoren der ersten N Schichten bleiben im System-RAM.</translation>
    </message>
    <message>
        <source>pinned: does not fit</source>
        <translation>festgelegt: passt nicht</translation>
    </message>
    <message>
        <source>Reset {setting} to automatic</source>
        <translation>{setting} auf automatisch zurücksetzen</translation>
    </message>
    <message>
        <source>Reset to automatic</source>
        <translation>Auf automatisch zurücksetzen</translation>
    </message>
    <message>
        <source>pinned</source>
        <translation>festgelegt</translation>
    </message>
    <message>
        <source>automatic</source>
        <translation>automatisch</translation>
    </message>
    <message>
        <source>measured</source>
        <translation>gemessen</translation>
    </message>
    <message>
        <source>The fastest for this model on this computer, measured at its first load</source>
        <translation>Auf diesem Computer für dieses Modell am schnellsten, gemessen beim ersten Laden</translation>
    </message>
    <message>
        <source>{value} of {top}</source>
        <translation>{value} von {top}</translation>
    </message>
    <message>
        <source>on</source>
        <translation>an</translation>
    </message>
    <message>
        <source>off</source>
        <translation>aus</translation>
    </message>
    <message>
        <source>auto</source>
        <translation>auto</translation>
    </message>
    <message>
        <source>GPU {index}: {name}</source>
        <translation>GPU {index}: {name}</translation>
    </message>
    <message>
        <source>Share of GPU {index}</source>
        <translation>Anteil von GPU {index}</translation>
    </message>
    <message>
        <source>Use GPU {index}</source>
        <translation>GPU {index} verwenden</translation>
    </message>
    <message>
        <source>Choose a model to see how it will be loaded.</source>
        <translation>Wählen Sie ein Modell, um zu sehen, wie es geladen wird.</translation>
    </message>
    <message>
        <source>Offload status</source>
        <translation>Offload-Status</translation>
    </message>
    <message>
        <source>Reset all to automatic</source>
        <translation>Alle auf automatisch zurücksetzen</translation>
    </message>
    <message>
        <source>Apply and reload</source>
        <translation>Übernehmen und neu laden</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>Einstellungen</translation>
    </message>
    <message>
        <source>Memory, predicted before loading</source>
        <translation>Speicher, vor dem Laden vorhergesagt</translation>
    </message>
    <message>
        <source>Why these numbers?</source>
        <translation>Warum diese Zahlen?</translation>
    </message>
    <message>
        <source>Show or hide the planner&apos;s reasons</source>
        <translation>Die Gründe des Planers ein- oder ausblenden</translation>
    </message>
    <message>
        <source>Reading the model and this computer&apos;s memory…</source>
        <translation>Das Modell und der Speicher dieses Computers werden gelesen…</translation>
    </message>
    <message>
        <source>Fits</source>
        <translation>Passt</translation>
    </message>
    <message>
        <source>{summary}.</source>
        <translation>{summary}.</translation>
    </message>
    <message>
        <source>These settings do not fit:</source>
        <translation>Diese Einstellungen passen nicht:</translation>
    </message>
    <message>
        <source>These settings do not fit; change the ones marked “does not fit” first.</source>
        <translation>Diese Einstellungen passen nicht; ändern Sie zuerst die mit „passt nicht“ markierten.</translation>
    </message>
    <message>
        <source>Every setting starts at the planner&apos;s choice; change one to pin it. Apply saves them for this model on this computer and reloads.</source>
        <translation>Jede Einstellung beginnt mit der Wahl des Planers; ändern Sie eine, um sie festzulegen. „Übernehmen“ speichert sie für dieses Modell auf diesem Computer und lädt neu.</translation>
    </message>
    <message>
        <source>Saved for this model on this computer; it loads with these settings now.</source>
        <translation>Für dieses Modell auf diesem Computer gespeichert; es wird jetzt mit diesen Einstellungen geladen.</translation>
    </message>
    <message>
        <source>Pages</source>
        <translation>Seiten</translation>
    </message>
    <message>
        <source>Next page</source>
        <translation>Nächste Seite</translation>
    </message>
    <message>
        <source>Previous page</source>
        <translation>Vorherige Seite</translation>
    </message>
    <message>
        <source>Show {page}</source>
        <translation>{page} anzeigen</translation>
    </message>
    <message>
        <source>Could not check: {why}</source>
        <translation>Prüfung nicht möglich: {why}</translation>
    </message>
    <message>
        <source>Checking…</source>
        <translation>Wird geprüft…</translation>
    </message>
    <message>
        <source>Open {repo}</source>
        <translation>{repo} öffnen</translation>
    </message>
    <message>
        <source>Quantization and download size</source>
        <translation>Quantisierung und Downloadgröße</translation>
    </message>
    <message>
        <source>Recommended for this computer</source>
        <translation>Empfohlen für diesen Computer</translation>
    </message>
    <message>
        <source>Checking which models fit this computer…</source>
        <translation>Es wird geprüft, welche Modelle auf diesen Computer passen…</translation>
    </message>
    <message>
        <source>No recommendations are available. Search for a model above.</source>
        <translation>Es sind keine Empfehlungen verfügbar. Suchen Sie oben nach einem Modell.</translation>
    </message>
    <message>
        <source>None of the recommended models fits this computer. Search for a smaller model above.</source>
        <translation>Keines der empfohlenen Modelle passt auf diesen Computer. Suchen Sie oben nach einem kleineren Modell.</translation>
    </message>
    <message>
        <source>Curated models that run well here. Still checking some of them…</source>
        <translation>Ausgewählte Modelle, die hier gut laufen. Einige werden noch geprüft…</translation>
    </message>
    <message>
        <source>Curated models. Some could not be checked against this computer; Retry checks them again.</source>
        <translation>Ausgewählte Modelle. Einige konnten nicht für diesen Computer geprüft werden; „Erneut versuchen“ prüft sie noch einmal.</translation>
    </message>
    <message>
        <source>Curated models that run well on this computer.</source>
        <translation>Ausgewählte Modelle, die auf diesem Computer gut laufen.</translation>
    </message>
    <message>
        <source>Vision projector (not a chat model)</source>
        <translation>Vision-Projektor (kein Chat-Modell)</translation>
    </message>
    <message>
        <source>Importance matrix (not a model)</source>
        <translation>Importance-Matrix (kein Modell)</translation>
    </message>
    <message>
        <source>Not a model</source>
        <translation>Kein Modell</translation>
    </message>
    <message>
        <source>A vision projector lets a model that understands images see them. It is loaded beside that model and cannot be chatted with on its own.</source>
        <translation>Ein Vision-Projektor lässt ein Modell, das Bilder versteht, diese sehen. Er wird neben diesem Modell geladen; allein kann man nicht mit ihm chatten.</translation>
    </message>
    <message>
        <source>Importance-matrix data is used when quantizing a model. It is not a model and cannot be loaded.</source>
        <translation>Importance-Matrix-Daten werden beim Quantisieren eines Modells verwendet. Sie sind kein Modell und können nicht geladen werden.</translation>
    </message>
    <message>
        <source>File</source>
        <translation>Datei</translation>
    </message>
    <message>
        <source>{name}: checking whether it fits this computer…</source>
        <translation>{name}: Es wird geprüft, ob es auf diesen Computer passt…</translation>
    </message>
    <message>
        <source>{name}: could not check whether it fits. {why}</source>
        <translation>{name}: Es konnte nicht geprüft werden, ob es passt. {why}</translation>
    </message>
    <message>
        <source>{name}: {verdict}
{reasons}</source>
        <translation>{name}: {verdict}
{reasons}</translation>
    </message>
    <message>
        <source>Hearth is reading this file&apos;s header to plan it for this computer.</source>
        <translation>Hearth liest den Header dieser Datei, um sie für diesen Computer zu planen.</translation>
    </message>
    <message>
        <source>Could not check</source>
        <translation>Prüfung nicht möglich</translation>
    </message>
    <message>
        <source>size unknown</source>
        <translation>Größe unbekannt</translation>
    </message>
    <message>
        <source>{size} · {parts} parts</source>
        <translation>{size} · {parts} Teile</translation>
    </message>
    <message>
        <source>{count} bytes</source>
        <translation>{count} Bytes</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>Herunterladen</translation>
    </message>
    <message>
        <source>Download {name}</source>
        <translation>{name} herunterladen</translation>
    </message>
    <message>
        <source>{count}M</source>
        <comment>millions, short</comment>
        <translation>{count} Mio.</translation>
    </message>
    <message>
        <source>{count}k</source>
        <comment>thousands, short</comment>
        <translation>{count} Tsd.</translation>
    </message>
    <message>
        <source>gated</source>
        <translation>zugangsbeschränkt</translation>
    </message>
    <message>
        <source>{repo}
{downloads} downloads · {likes} likes · updated {date}</source>
        <translation>{repo}
{downloads} Downloads · {likes} Likes · aktualisiert {date}</translation>
    </message>
    <message>
        <source>General</source>
        <translation>Allgemein</translation>
    </message>
    <message>
        <source>Sharing</source>
        <translation>Freigabe</translation>
    </message>
    <message>
        <source>Other computers</source>
        <translation>Andere Computer</translation>
    </message>
    <message>
        <source>Tools</source>
        <translation>Werkzeuge</translation>
    </message>
    <message>
        <source>What this conversation offers a model that knows tools; each call is still asked about.</source>
        <translation>Was diese Unterhaltung einem Modell anbietet, das Werkzeuge kennt; jeder Aufruf wird trotzdem erfragt.</translation>
    </message>
    <message>
        <source>Offer {tools} in this conversation</source>
        <translation>{tools} in dieser Unterhaltung anbieten</translation>
    </message>
    <message>
        <source>Appearance</source>
        <translation>Darstellung</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>Sprache</translation>
    </message>
    <message>
        <source>OpenAI-compatible servers</source>
        <translation>OpenAI-kompatible Server</translation>
    </message>
    <message>
        <source>The settings could not be saved ({error}); they apply until Hearth closes.</source>
        <translation>Die Einstellungen konnten nicht gespeichert werden ({error}); sie gelten, bis Hearth geschlossen wird.</translation>
    </message>
    <message>
        <source>Follow the system</source>
        <translation>Wie das System</translation>
    </message>
    <message>
        <source>Light</source>
        <translation>Hell</translation>
    </message>
    <message>
        <source>Dark</source>
        <translation>Dunkel</translation>
    </message>
    <message>
        <source>Folders</source>
        <translation>Ordner</translation>
    </message>
    <message>
        <source>Change…</source>
        <translation>Ändern…</translation>
    </message>
    <message>
        <source>Change the download folder</source>
        <translation>Den Download-Ordner ändern</translation>
    </message>
    <message>
        <source>Add a folder of models</source>
        <translation>Einen Ordner mit Modellen hinzufügen</translation>
    </message>
    <message>
        <source>Download folder</source>
        <translation>Download-Ordner</translation>
    </message>
    <message>
        <source>Also listed</source>
        <translation>Ebenfalls aufgelistet</translation>
    </message>
    <message>
        <source>Models that LM Studio, Ollama, Jan, GPT4All or the Hugging Face cache already have are found without adding their folders.</source>
        <translation>Modelle, die LM Studio, Ollama, Jan, GPT4All oder der Hugging-Face-Cache schon haben, werden gefunden, ohne dass Sie deren Ordner hinzufügen.</translation>
    </message>
    <message>
        <source>Where Hearth downloads models</source>
        <translation>Wohin Hearth Modelle herunterlädt</translation>
    </message>
    <message>
        <source>The library&apos;s folders cannot be read: {error}</source>
        <translation>Die Ordner der Bibliothek können nicht gelesen werden: {error}</translation>
    </message>
    <message>
        <source>Hugging Face</source>
        <translation>Hugging Face</translation>
    </message>
    <message>
        <source>Hugging Face token</source>
        <translation>Hugging-Face-Token</translation>
    </message>
    <message>
        <source>Access token</source>
        <translation>Zugriffstoken</translation>
    </message>
    <message>
        <source>Automatic (the best one for this computer)</source>
        <translation>Automatisch (der beste für diesen Computer)</translation>
    </message>
    <message>
        <source>{runtime}: cannot be used ({why})</source>
        <translation>{runtime}: nicht verwendbar ({why})</translation>
    </message>
    <message>
        <source>{runtime} (not installed)</source>
        <translation>{runtime} (nicht installiert)</translation>
    </message>
    <message>
        <source>The llama.cpp build the runner serves with: CUDA for NVIDIA, Metal on Apple Silicon, Vulkan for AMD and Intel, else the CPU. Each is self-tested before use; a change applies from the next load.</source>
        <translation>Der llama.cpp-Build, mit dem der Runner arbeitet: CUDA für NVIDIA, Metal auf Apple Silicon, Vulkan für AMD und Intel, sonst die CPU. Jeder wird vor der Verwendung selbst getestet; eine Änderung gilt ab dem nächsten Laden.</translation>
    </message>
    <message>
        <source>In use: {runtime}. {about}</source>
        <translation>In Verwendung: {runtime}. {about}</translation>
    </message>
    <message>
        <source>llama.cpp build</source>
        <translation>llama.cpp-Build</translation>
    </message>
    <message>
        <source>Theme</source>
        <translation>Design</translation>
    </message>
    <message>
        <source>Colours</source>
        <translation>Farben</translation>
    </message>
    <message>
        <source>“Follow the system” switches with your system&apos;s light or dark mode.</source>
        <translation>„Wie das System“ wechselt mit dem hellen oder dunklen Modus Ihres Systems.</translation>
    </message>
    <message>
        <source>Follow the system ({language})</source>
        <translation>Wie das System ({language})</translation>
    </message>
    <message>
        <source>Hearth&apos;s language</source>
        <translation>Sprache von Hearth</translation>
    </message>
    <message>
        <source>A change applies the next time Hearth starts. Model names, file names and what the models write stay as they are.</source>
        <translation>Eine Änderung gilt ab dem nächsten Start von Hearth. Modellnamen, Dateinamen und was die Modelle schreiben, bleiben, wie sie sind.</translation>
    </message>
    <message>
        <source>Hearth shows the new language the next time it starts.</source>
        <translation>Hearth zeigt die neue Sprache beim nächsten Start.</translation>
    </message>
    <message>
        <source>Logs</source>
        <translation>Logs</translation>
    </message>
    <message>
        <source>Open the log folder</source>
        <translation>Den Log-Ordner öffnen</translation>
    </message>
    <message>
        <source>Hearth&apos;s and the model runner&apos;s logs: attach them to a bug report</source>
        <translation>Die Logs von Hearth und vom Modell-Runner: Hängen Sie sie an einen Fehlerbericht an</translation>
    </message>
    <message>
        <source>Log folder</source>
        <translation>Log-Ordner</translation>
    </message>
    <message>
        <source>Other apps and devices can use the model running now until it loads again.</source>
        <translation>Andere Apps und Geräte können das gerade laufende Modell nutzen, bis es neu geladen wird.</translation>
    </message>
    <message>
        <source>Other apps can use the model running now until it loads again.</source>
        <translation>Andere Apps können das gerade laufende Modell nutzen, bis es neu geladen wird.</translation>
    </message>
    <message>
        <source>The model running now was loaded with a private address and key: what is shown here applies from the next load.</source>
        <translation>Das gerade laufende Modell wurde mit einer privaten Adresse und einem privaten Schlüssel geladen: Was hier angezeigt wird, gilt ab dem nächsten Laden.</translation>
    </message>
    <message>
        <source>The choice of who can connect applies from the next load.</source>
        <translation>Die Wahl, wer sich verbinden darf, gilt ab dem nächsten Laden.</translation>
    </message>
    <message>
        <source>The port chosen above applies from the next load.</source>
        <translation>Der oben gewählte Port gilt ab dem nächsten Laden.</translation>
    </message>
    <message>
        <source>The new key applies from the next load.</source>
        <translation>Der neue Schlüssel gilt ab dem nächsten Laden.</translation>
    </message>
    <message>
        <source>Only Hearth talks to the model. Turn this on to use it from another app (an editor, a script that speaks the OpenAI API) or another device.</source>
        <translation>Nur Hearth spricht mit dem Modell. Schalten Sie dies ein, um es aus einer anderen App (einem Editor, einem Skript, das die OpenAI-API spricht) oder von einem anderen Gerät aus zu nutzen.</translation>
    </message>
    <message>
        <source>Load a model in the chat to use it this way.</source>
        <translation>Laden Sie im Chat ein Modell, um es so zu nutzen.</translation>
    </message>
    <message>
        <source>Paste these into any OpenAI client on this computer. Only this computer can connect (127.0.0.1).</source>
        <translation>Fügen Sie diese Angaben in einen beliebigen OpenAI-Client auf diesem Computer ein. Nur dieser Computer kann sich verbinden (127.0.0.1).</translation>
    </message>
    <message>
        <source>Paste these into any OpenAI client on this computer or on another device on your network.</source>
        <translation>Fügen Sie diese Angaben in einen beliebigen OpenAI-Client auf diesem Computer oder auf einem anderen Gerät in Ihrem Netzwerk ein.</translation>
    </message>
    <message>
        <source>This computer&apos;s other addresses work too: {addresses}.</source>
        <translation>Die anderen Adressen dieses Computers funktionieren auch: {addresses}.</translation>
    </message>
    <message>
        <source>The key stays the same at every load until you rotate it.</source>
        <translation>Der Schlüssel bleibt bei jedem Laden gleich, bis Sie ihn erneuern.</translation>
    </message>
    <message>
        <source>The port changes at each load: choose a fixed port to keep the address.</source>
        <translation>Der Port ändert sich bei jedem Laden: Wählen Sie einen festen Port, damit die Adresse gleich bleibt.</translation>
    </message>
    <message>
        <source>Or press “Apply now” to load it again at once.</source>
        <translation>Oder drücken Sie „Jetzt anwenden“, um es sofort neu zu laden.</translation>
    </message>
    <message>
        <source>Other apps and devices</source>
        <translation>Andere Apps und Geräte</translation>
    </message>
    <message>
        <source>Who can connect</source>
        <translation>Wer sich verbinden darf</translation>
    </message>
    <message>
        <source>Port</source>
        <translation>Port</translation>
    </message>
    <message>
        <source>A fixed port keeps the address the same from one load to the next.</source>
        <translation>Mit einem festen Port bleibt die Adresse von einem Laden zum nächsten gleich.</translation>
    </message>
    <message>
        <source>Let other apps and devices use this model</source>
        <translation>Andere Apps und Geräte dieses Modell nutzen lassen</translation>
    </message>
    <message>
        <source>Any app that speaks the OpenAI API (editors, scripts, chat front ends, another Hearth) can then send it requests with the key below.</source>
        <translation>Jede App, die die OpenAI-API spricht (Editoren, Skripte, Chat-Oberflächen, ein anderes Hearth), kann ihm dann mit dem Schlüssel unten Anfragen senden.</translation>
    </message>
    <message>
        <source>Any free port</source>
        <translation>Beliebiger freier Port</translation>
    </message>
    <message>
        <source>A fixed port ({low}–{high}) keeps the address the same from one load to the next.</source>
        <translation>Mit einem festen Port ({low}–{high}) bleibt die Adresse von einem Laden zum nächsten gleich.</translation>
    </message>
    <message>
        <source>Only this computer (127.0.0.1)</source>
        <translation>Nur dieser Computer (127.0.0.1)</translation>
    </message>
    <message>
        <source>Devices on every network this computer is on</source>
        <translation>Geräte in allen Netzwerken, in denen dieser Computer ist</translation>
    </message>
    <message>
        <source>Devices on the network of {interface}</source>
        <translation>Geräte im Netzwerk von {interface}</translation>
    </message>
    <message>
        <source>{address} (not on this computer now)</source>
        <translation>{address} (derzeit nicht auf diesem Computer)</translation>
    </message>
    <message>
        <source>Anyone on your network who has the key can use this model, and what they send is not encrypted (http): share only on networks you trust, such as your home, not a café&apos;s. Your firewall may ask whether Hearth&apos;s runner may accept connections.</source>
        <translation>Jeder in Ihrem Netzwerk, der den Schlüssel hat, kann dieses Modell nutzen, und was gesendet wird, ist nicht verschlüsselt (http): Geben Sie es nur in Netzwerken frei, denen Sie vertrauen, etwa zu Hause, nicht im Café. Ihre Firewall fragt vielleicht, ob der Runner von Hearth Verbindungen annehmen darf.</translation>
    </message>
    <message>
        <source>Let models fetch images from links in requests</source>
        <translation>Modelle Bilder aus Links in Anfragen abrufen lassen</translation>
    </message>
    <message>
        <source>Programs using the model (here or through the model server) may link to an image instead of sending it. At most 20 MiB and 10 seconds an image.</source>
        <translation>Programme, die das Modell nutzen (hier oder über den Modellserver), dürfen auf ein Bild verlinken, statt es zu senden. Höchstens 20 MiB und 10 Sekunden je Bild.</translation>
    </message>
    <message>
        <source>For other programs&apos; requests: images come from the internet only, never from addresses on your network. Applies from the next load.</source>
        <translation>Für Anfragen anderer Programme: Bilder kommen nur aus dem Internet, nie von Adressen in Ihrem Netzwerk. Gilt ab dem nächsten Laden.</translation>
    </message>
    <message>
        <source>Address (base URL)</source>
        <translation>Adresse (Basis-URL)</translation>
    </message>
    <message>
        <source>Copy the address</source>
        <translation>Die Adresse kopieren</translation>
    </message>
    <message>
        <source>Copy the API key</source>
        <translation>Den API-Schlüssel kopieren</translation>
    </message>
    <message>
        <source>Base URL</source>
        <translation>Basis-URL</translation>
    </message>
    <message>
        <source>Rotate key</source>
        <translation>Schlüssel erneuern</translation>
    </message>
    <message>
        <source>Make a new API key</source>
        <translation>Einen neuen API-Schlüssel erzeugen</translation>
    </message>
    <message>
        <source>Make a new key and keep it instead of the old one. Apps set up with the old key stop working once the model loads again.</source>
        <translation>Einen neuen Schlüssel erzeugen und statt des alten behalten. Apps, die mit dem alten Schlüssel eingerichtet sind, funktionieren nicht mehr, sobald das Modell neu geladen wird.</translation>
    </message>
    <message>
        <source>Apply now (reloads the model)</source>
        <translation>Jetzt anwenden (lädt das Modell neu)</translation>
    </message>
    <message>
        <source>Load the model again now, so that the sharing settings above apply at once instead of from the next load.</source>
        <translation>Das Modell jetzt neu laden, damit die Freigabe-Einstellungen oben sofort gelten und nicht erst ab dem nächsten Laden.</translation>
    </message>
    <message>
        <source>A new key is kept. The model running now still uses the old one until it loads again.</source>
        <translation>Ein neuer Schlüssel ist gespeichert. Das gerade laufende Modell verwendet noch den alten, bis es neu geladen wird.</translation>
    </message>
    <message>
        <source>A new key is kept. Models load with it from now on.</source>
        <translation>Ein neuer Schlüssel ist gespeichert. Modelle werden ab jetzt damit geladen.</translation>
    </message>
    <message>
        <source>Loading the model again with the new sharing settings…</source>
        <translation>Das Modell wird mit den neuen Freigabe-Einstellungen neu geladen…</translation>
    </message>
    <message>
        <source>Ports below {low} need administrator rights: choose {low}–{high}, or “Any free port”.</source>
        <translation>Ports unter {low} erfordern Administratorrechte: Wählen Sie {low}–{high} oder „Beliebiger freier Port“.</translation>
    </message>
    <message>
        <source>The address is on the clipboard.</source>
        <translation>Die Adresse ist in der Zwischenablage.</translation>
    </message>
    <message>
        <source>The key is on the clipboard.</source>
        <translation>Der Schlüssel ist in der Zwischenablage.</translation>
    </message>
    <message>
        <source>Action</source>
        <translation>Aktion</translation>
    </message>
    <message>
        <source>Keys</source>
        <translation>Tasten</translation>
    </message>
    <message>
        <source>If you continue, Hearth works as usual, but this session&apos;s conversations are kept only in a temporary folder, {folder}, not in your library; the system may delete that folder later. The models you already downloaded stay available.</source>
        <translation>Wenn Sie fortfahren, arbeitet Hearth wie gewohnt, aber die Unterhaltungen dieser Sitzung werden nur in einem temporären Ordner gespeichert, {folder}, nicht in Ihrer Bibliothek; das System löscht diesen Ordner vielleicht später. Die Modelle, die Sie schon heruntergeladen haben, bleiben verfügbar.</translation>
    </message>
    <message>
        <source>Hearth cannot save its data</source>
        <translation>Hearth kann seine Daten nicht speichern</translation>
    </message>
    <message>
        <source>Hearth could not make a temporary folder to use instead either.</source>
        <translation>Hearth konnte auch keinen temporären Ordner als Ersatz anlegen.</translation>
    </message>
    <message>
        <source>Continue without keeping conversations</source>
        <translation>Ohne Speichern der Unterhaltungen fortfahren</translation>
    </message>
    <message>
        <source>Hearth set a damaged library aside</source>
        <translation>Hearth hat eine beschädigte Bibliothek beiseitegelegt</translation>
    </message>
    <message>
        <source>Hearth cannot open its library</source>
        <translation>Hearth kann seine Bibliothek nicht öffnen</translation>
    </message>
    <message>
        <source>Conversations are not saved until this is fixed and Hearth is started again.</source>
        <translation>Unterhaltungen werden nicht gespeichert, bis dies behoben und Hearth neu gestartet ist.</translation>
    </message>
    <message>
        <source>Gated models (Llama, Gemma, …) need an access token with read access, and their license accepted on the model&apos;s page. Create one at {link}. Hearth keeps it in your system&apos;s keyring, or where there is none in a file only your account can read.</source>
        <translation>Zugangsbeschränkte Modelle (Llama, Gemma, …) brauchen ein Zugriffstoken mit Leserechten, und ihre Lizenz muss auf der Seite des Modells akzeptiert sein. Erstellen Sie eines unter {link}. Hearth speichert es im Schlüsselbund Ihres Systems oder, wo es keinen gibt, in einer Datei, die nur Ihr Benutzerkonto lesen kann.</translation>
    </message>
    <message>
        <source>Check and save</source>
        <translation>Prüfen und speichern</translation>
    </message>
    <message>
        <source>Forget the saved token</source>
        <translation>Das gespeicherte Token vergessen</translation>
    </message>
    <message>
        <source>Paste a token first.</source>
        <translation>Fügen Sie zuerst ein Token ein.</translation>
    </message>
    <message>
        <source>Checking the token with Hugging Face…</source>
        <translation>Das Token wird bei Hugging Face geprüft…</translation>
    </message>
    <message>
        <source>Signed in as {user}. The token is saved.</source>
        <translation>Angemeldet als {user}. Das Token ist gespeichert.</translation>
    </message>
    <message>
        <source>The saved token is forgotten.</source>
        <translation>Das gespeicherte Token ist vergessen.</translation>
    </message>
    <message numerus="yes">
        <source>{cpu} (%n core(s))</source>
        <translation>
            <numerusform>{cpu} (%n Kern)</numerusform>
            <numerusform>{cpu} (%n Kerne)</numerusform>
        </translation>
    </message>
    <message>
        <source>{size} of RAM</source>
        <translation>{size} RAM</translation>
    </message>
    <message>
        <source>{n} × {gpu} ({size} each, shared with the system)</source>
        <translation>{n} × {gpu} (je {size}, mit dem System geteilt)</translation>
    </message>
    <message>
        <source>{n} × {gpu} ({size} each)</source>
        <translation>{n} × {gpu} (je {size})</translation>
    </message>
    <message>
        <source>{gpu} ({size}, shared with the system)</source>
        <translation>{gpu} ({size}, mit dem System geteilt)</translation>
    </message>
    <message>
        <source>{gpu} ({size})</source>
        <translation>{gpu} ({size})</translation>
    </message>
    <message>
        <source>no GPU: models run on the CPU</source>
        <translation>keine GPU: Modelle laufen auf der CPU</translation>
    </message>
    <message>
        <source>Welcome to Hearth</source>
        <translation>Willkommen bei Hearth</translation>
    </message>
    <message>
        <source>Run open language models on this computer: what you type stays here. Pick a model that fits; Hearth downloads it, then you chat.</source>
        <translation>Offene Sprachmodelle auf diesem Computer ausführen: Was Sie eingeben, bleibt hier. Wählen Sie ein Modell, das passt; Hearth lädt es herunter, dann chatten Sie.</translation>
    </message>
    <message>
        <source>Looking at this computer&apos;s hardware…</source>
        <translation>Die Hardware dieses Computers wird untersucht…</translation>
    </message>
    <message>
        <source>This computer</source>
        <translation>Dieser Computer</translation>
    </message>
    <message>
        <source>Skip: I&apos;ll look around myself</source>
        <translation>Überspringen: Ich sehe mich selbst um</translation>
    </message>
    <message>
        <source>Go to the chat; models can be found in the Discover tab at any time</source>
        <translation>Zum Chat gehen; Modelle finden Sie jederzeit im Tab „Entdecken“</translation>
    </message>
    <message>
        <source>Downloading…</source>
        <translation>Wird heruntergeladen…</translation>
    </message>
    <message>
        <source>MCP servers</source>
        <translation>MCP-Server</translation>
    </message>
    <message>
        <source>Servers that give models more tools, started when a conversation uses them and stopped when Hearth closes. Each call is still asked about. A server&apos;s descriptions of its tools are its own words: read them before you allow anything.</source>
        <translation>Server, die Modellen weitere Werkzeuge geben: gestartet, wenn eine Unterhaltung sie nutzt, und beendet, wenn Hearth schließt. Jeder Aufruf wird trotzdem erfragt. Wie ein Server seine Werkzeuge beschreibt, sind seine eigenen Worte: Lesen Sie sie, bevor Sie etwas erlauben.</translation>
    </message>
    <message>
        <source>Name, such as files</source>
        <translation>Name, etwa files</translation>
    </message>
    <message>
        <source>A command (npx -y @modelcontextprotocol/server-filesystem ~/notes) or an https:// address</source>
        <translation>Ein Befehl (npx -y @modelcontextprotocol/server-filesystem ~/notes) oder eine https://-Adresse</translation>
    </message>
    <message>
        <source>Command or address</source>
        <translation>Befehl oder Adresse</translation>
    </message>
    <message>
        <source>Environment variables (command) or headers (address), one NAME=value a line</source>
        <translation>Umgebungsvariablen (Befehl) oder Header (Adresse), ein NAME=Wert pro Zeile</translation>
    </message>
    <message>
        <source>Environment or headers</source>
        <translation>Umgebung oder Header</translation>
    </message>
    <message>
        <source>Add server</source>
        <translation>Server hinzufügen</translation>
    </message>
    <message>
        <source>Import…</source>
        <translation>Importieren…</translation>
    </message>
    <message>
        <source>Add the servers of an mcpServers JSON file (Claude Desktop, LM Studio, Cursor)</source>
        <translation>Die Server einer mcpServers-JSON-Datei hinzufügen (Claude Desktop, LM Studio, Cursor)</translation>
    </message>
    <message>
        <source>Import MCP servers</source>
        <translation>MCP-Server importieren</translation>
    </message>
    <message>
        <source>Export…</source>
        <translation>Exportieren…</translation>
    </message>
    <message>
        <source>Save the servers as an mcpServers JSON file (header values left empty)</source>
        <translation>Die Server als mcpServers-JSON-Datei speichern (Header-Werte bleiben leer)</translation>
    </message>
    <message>
        <source>Export MCP servers</source>
        <translation>MCP-Server exportieren</translation>
    </message>
    <message>
        <source>No MCP servers yet.</source>
        <translation>Noch keine MCP-Server.</translation>
    </message>
    <message>
        <source>On</source>
        <translation>An</translation>
    </message>
    <message>
        <source>Off</source>
        <translation>Aus</translation>
    </message>
    <message>
        <source>Low</source>
        <translation>Niedrig</translation>
    </message>
    <message>
        <source>Medium</source>
        <translation>Mittel</translation>
    </message>
    <message>
        <source>High</source>
        <translation>Hoch</translation>
    </message>
    <message>
        <source>Thinking</source>
        <translation>Nachdenken</translation>
    </message>
    <message>
        <source>Whether the model thinks before it answers, or how hard: slower, often better.</source>
        <translation>Ob das Modell nachdenkt, bevor es antwortet, oder wie gründlich: langsamer, oft besser.</translation>
    </message>
    <message>
        <source>{name} on</source>
        <translation>{name} an</translation>
    </message>
    <message>
        <source>Test</source>
        <translation>Testen</translation>
    </message>
    <message>
        <source>Test {name}</source>
        <translation>{name} testen</translation>
    </message>
    <message>
        <source>Off.</source>
        <translation>Aus.</translation>
    </message>
    <message numerus="yes">
        <source>Ready with %n tool(s).</source>
        <translation>
            <numerusform>Bereit mit %n Werkzeug.</numerusform>
            <numerusform>Bereit mit %n Werkzeugen.</numerusform>
        </translation>
    </message>
    <message>
        <source>Starting…</source>
        <translation>Wird gestartet…</translation>
    </message>
    <message>
        <source>Failed: {error}</source>
        <translation>Fehlgeschlagen: {error}</translation>
    </message>
    <message>
        <source>no reason given</source>
        <translation>kein Grund angegeben</translation>
    </message>
    <message>
        <source>Not started (it starts when a conversation uses it, or with Test).</source>
        <translation>Nicht gestartet (er startet, wenn eine Unterhaltung ihn nutzt, oder mit Testen).</translation>
    </message>
    <message>
        <source>Give the server a name of letters, digits, spaces, “_”, “.” or “-”, at most 64 characters.</source>
        <translation>Geben Sie dem Server einen Namen aus Buchstaben, Ziffern, Leerzeichen, „_“, „.“ oder „-“, höchstens 64 Zeichen.</translation>
    </message>
    <message>
        <source>There is already a server named {name}.</source>
        <translation>Es gibt schon einen Server namens {name}.</translation>
    </message>
    <message>
        <source>Write each variable or header as NAME=value, one a line.</source>
        <translation>Schreiben Sie jede Variable und jeden Header als NAME=Wert, einen pro Zeile.</translation>
    </message>
    <message>
        <source>The command cannot be read: {error}.</source>
        <translation>Der Befehl ist nicht lesbar: {error}.</translation>
    </message>
    <message>
        <source>Give the command that starts the server, or its https:// address.</source>
        <translation>Geben Sie den Befehl an, der den Server startet, oder seine https://-Adresse.</translation>
    </message>
    <message>
        <source>The file could not be read: {error}</source>
        <translation>Die Datei konnte nicht gelesen werden: {error}</translation>
    </message>
    <message numerus="yes">
        <source>Added %n server(s); none was started.</source>
        <translation>
            <numerusform>%n Server hinzugefügt; keiner wurde gestartet.</numerusform>
            <numerusform>%n Server hinzugefügt; keiner wurde gestartet.</numerusform>
        </translation>
    </message>
    <message>
        <source>The file could not be written: {error}</source>
        <translation>Die Datei konnte nicht geschrieben werden: {error}</translation>
    </message>
    <message>
        <source>{name} is downloading. It can be used as soon as it is here.</source>
        <translation>{name} wird heruntergeladen. Es kann verwendet werden, sobald es da ist.</translation>
    </message>
    <message>
        <source>The hardware could not be detected: {why}</source>
        <translation>Die Hardware konnte nicht erkannt werden: {why}</translation>
    </message>
    <message>
        <source>Trying again…</source>
        <translation>Neuer Versuch…</translation>
    </message>
    <message>
        <source>{percent}% · {done} of {total}</source>
        <translation>{percent} % · {done} von {total}</translation>
    </message>
    <message>
        <source>{progress} · {speed}/s</source>
        <translation>{progress} · {speed}/s</translation>
    </message>
    <message>
        <source>Paused</source>
        <translation>Pausiert</translation>
    </message>
    <message>
        <source>Paused: {why}</source>
        <translation>Pausiert: {why}</translation>
    </message>
    <message>
        <source>Start chatting</source>
        <translation>Chat starten</translation>
    </message>
    <message>
        <source>{name} is downloaded and checked. Press “Start chatting”.</source>
        <translation>{name} ist heruntergeladen und geprüft. Drücken Sie „Chat starten“.</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>Erneut versuchen</translation>
    </message>
    <message>
        <source>Choose a .gguf model file on this computer and chat with it</source>
        <translation>Eine .gguf-Modelldatei auf diesem Computer auswählen und damit chatten</translation>
    </message>
    <message>
        <source>Use a model already on this computer</source>
        <translation>Ein Modell verwenden, das schon auf diesem Computer ist</translation>
    </message>
    <message>
        <source>No models were found in Hearth&apos;s folder or other apps&apos; (LM Studio, Ollama, Jan, GPT4All, the Hugging Face cache). Download a recommended one, or open a GGUF file.</source>
        <translation>Im Ordner von Hearth und in denen anderer Apps (LM Studio, Ollama, Jan, GPT4All, Hugging-Face-Cache) wurden keine Modelle gefunden. Laden Sie ein empfohlenes herunter oder öffnen Sie eine GGUF-Datei.</translation>
    </message>
    <message>
        <source>The first {shown} of {count}; the Models tab lists them all.</source>
        <translation>Die ersten {shown} von {count}; der Tab „Modelle“ listet alle auf.</translation>
    </message>
    <message>
        <source>Use {name} from {source}</source>
        <translation>{name} aus {source} verwenden</translation>
    </message>
    <message>
        <source>Load {path} and chat with it</source>
        <translation>{path} laden und damit chatten</translation>
    </message>
    <message>
        <source>Looking in Hearth&apos;s folder and other apps&apos; (LM Studio, Ollama, Jan, GPT4All, the Hugging Face cache)…</source>
        <translation>Suche im Ordner von Hearth und in denen anderer Apps (LM Studio, Ollama, Jan, GPT4All, Hugging-Face-Cache)…</translation>
    </message>
    <message>
        <source>Ask Hugging Face again about the recommended models</source>
        <translation>Hugging Face erneut nach den empfohlenen Modellen fragen</translation>
    </message>
    <message>
        <source>Download {title}</source>
        <translation>{title} herunterladen</translation>
    </message>
    <message>
        <source>Hugging Face cannot be reached. Check the connection and press Retry.</source>
        <translation>Hugging Face ist nicht erreichbar. Prüfen Sie die Verbindung und drücken Sie „Erneut versuchen“.</translation>
    </message>
    <message>
        <source>{why} It can be downloaded once Retry reaches Hugging Face.</source>
        <translation>{why} Es kann heruntergeladen werden, sobald „Erneut versuchen“ Hugging Face erreicht.</translation>
    </message>
    <message>
        <source>Asking Hugging Face again…</source>
        <translation>Hugging Face wird erneut gefragt…</translation>
    </message>
    <message>
        <source>No recommendations are available now. The Discover tab searches all of Hugging Face.</source>
        <translation>Derzeit sind keine Empfehlungen verfügbar. Der Tab „Entdecken“ durchsucht ganz Hugging Face.</translation>
    </message>
    <message>
        <source>None of the recommended models fits this computer. The Discover tab can find smaller ones.</source>
        <translation>Keines der empfohlenen Modelle passt auf diesen Computer. Im Tab „Entdecken“ finden Sie kleinere.</translation>
    </message>
    <message>
        <source>Models that run well here. Still checking some of them…</source>
        <translation>Modelle, die hier gut laufen. Einige werden noch geprüft…</translation>
    </message>
    <message>
        <source>Models that run well on this computer. Pick one to download it.</source>
        <translation>Modelle, die auf diesem Computer gut laufen. Wählen Sie eines aus, um es herunterzuladen.</translation>
    </message>
    <message>
        <source>This computer only (for an SSH tunnel)</source>
        <translation>Nur dieser Computer (für einen SSH-Tunnel)</translation>
    </message>
    <message>
        <source>Every network this computer is on</source>
        <translation>Alle Netzwerke, in denen dieser Computer ist</translation>
    </message>
    <message>
        <source>Workers</source>
        <translation>Worker</translation>
    </message>
    <message>
        <source>Lend this computer</source>
        <translation>Diesen Computer bereitstellen</translation>
    </message>
    <message>
        <source>Split a model too big for this computer over others that run “hearth-runner rpc-worker”: the planner puts layers on their devices like on a GPU and says which machine holds what.</source>
        <translation>Ein Modell, das für diesen Computer zu groß ist, auf andere Computer aufteilen, auf denen „hearth-runner rpc-worker“ läuft: Der Planer legt Schichten auf ihre Geräte wie auf eine GPU und sagt, welcher Rechner was enthält.</translation>
    </message>
    <message>
        <source>host:port, such as {example}</source>
        <translation>host:port, etwa {example}</translation>
    </message>
    <message>
        <source>Worker address</source>
        <translation>Worker-Adresse</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>Hinzufügen</translation>
    </message>
    <message>
        <source>Add the worker</source>
        <translation>Den Worker hinzufügen</translation>
    </message>
    <message>
        <source>Remove the worker</source>
        <translation>Den Worker entfernen</translation>
    </message>
    <message>
        <source>Check</source>
        <translation>Prüfen</translation>
    </message>
    <message>
        <source>Check the workers</source>
        <translation>Die Worker prüfen</translation>
    </message>
    <message>
        <source>Ask each worker which devices it lends and how much memory they have free</source>
        <translation>Jeden Worker fragen, welche Geräte er bereitstellt und wie viel Speicher darauf frei ist</translation>
    </message>
    <message>
        <source>Lend this computer&apos;s devices to another Hearth</source>
        <translation>Die Geräte dieses Computers einem anderen Hearth bereitstellen</translation>
    </message>
    <message>
        <source>Lend on</source>
        <translation>Bereitstellen über</translation>
    </message>
    <message>
        <source>The worker protocol has no password or encryption, and it runs what it is sent: anyone who can reach its port can run code on this computer. Use it only on a network you trust, a VPN or an SSH tunnel.</source>
        <translation>Das Worker-Protokoll hat kein Passwort und keine Verschlüsselung, und es führt aus, was ihm gesendet wird: Jeder, der seinen Port erreicht, kann Code auf diesem Computer ausführen. Verwenden Sie es nur in einem Netzwerk, dem Sie vertrauen, in einem VPN oder über einen SSH-Tunnel.</translation>
    </message>
    <message>
        <source>Reachable from</source>
        <translation>Erreichbar von</translation>
    </message>
    <message>
        <source>{worker} — {state}</source>
        <translation>{worker} — {state}</translation>
    </message>
    <message>
        <source>not checked yet</source>
        <translation>noch nicht geprüft</translation>
    </message>
    <message>
        <source>No worker added: models load on this computer alone.</source>
        <translation>Kein Worker hinzugefügt: Modelle werden nur auf diesem Computer geladen.</translation>
    </message>
    <message>
        <source>Lending on port {port} of every network: on the other Hearth, add this computer&apos;s address with :{port}. It serves one Hearth at a time and stops when Hearth closes.</source>
        <translation>Bereitgestellt auf Port {port} aller Netzwerke: Fügen Sie im anderen Hearth die Adresse dieses Computers mit :{port} hinzu. Der Worker bedient jeweils ein Hearth und endet, wenn Hearth geschlossen wird.</translation>
    </message>
    <message>
        <source>Lending on {address}: add this address on the other Hearth (through an SSH tunnel from another computer). It serves one Hearth at a time and stops when Hearth closes.</source>
        <translation>Bereitgestellt auf {address}: Fügen Sie diese Adresse im anderen Hearth hinzu (über einen SSH-Tunnel von einem anderen Computer aus). Der Worker bedient jeweils ein Hearth und endet, wenn Hearth geschlossen wird.</translation>
    </message>
    <message>
        <source>Starting the worker…</source>
        <translation>Der Worker wird gestartet…</translation>
    </message>
    <message>
        <source>Off. On the other computer, add this one&apos;s address and port 50052.</source>
        <translation>Aus. Fügen Sie auf dem anderen Computer die Adresse dieses Computers und Port 50052 hinzu.</translation>
    </message>
    <message>
        <source>device {index}: {free} of {total} GiB free</source>
        <translation>Gerät {index}: {free} von {total} GiB frei</translation>
    </message>
    <message>
        <source>not usable: {why}</source>
        <translation>nicht verwendbar: {why}</translation>
    </message>
    <message>
        <source>it is on a read-only file system</source>
        <translation>er liegt auf einem schreibgeschützten Dateisystem</translation>
    </message>
    <message>
        <source>you do not have permission to write there</source>
        <translation>Sie haben keine Berechtigung, dort zu schreiben</translation>
    </message>
    <message>
        <source>the disk is full</source>
        <translation>der Datenträger ist voll</translation>
    </message>
    <message>
        <source>a file stands where that folder (or one above it) should be</source>
        <translation>eine Datei steht dort, wo dieser Ordner (oder einer darüber) sein sollte</translation>
    </message>
    <message>
        <source>the system refused</source>
        <translation>das System hat es verweigert</translation>
    </message>
    <message>
        <source>Make that disk writable</source>
        <translation>Machen Sie diesen Datenträger beschreibbar</translation>
    </message>
    <message>
        <source>Give your user account permission to write to that folder (a folder created by running Hearth as another user, for example with sudo, belongs to that user)</source>
        <translation>Geben Sie Ihrem Benutzerkonto die Berechtigung, in diesen Ordner zu schreiben (ein Ordner, der angelegt wurde, als Hearth als anderer Benutzer lief, zum Beispiel mit sudo, gehört diesem Benutzer)</translation>
    </message>
    <message>
        <source>Free some space on that disk</source>
        <translation>Schaffen Sie Platz auf diesem Datenträger</translation>
    </message>
    <message>
        <source>Move that file out of the way</source>
        <translation>Verschieben Sie diese Datei an einen anderen Ort</translation>
    </message>
    <message>
        <source>Check that the disk is connected and healthy</source>
        <translation>Prüfen Sie, ob der Datenträger angeschlossen und in Ordnung ist</translation>
    </message>
    <message>
        <source>a file, {blocker}, stands where a folder should be</source>
        <translation>eine Datei, {blocker}, steht dort, wo ein Ordner sein sollte</translation>
    </message>
    <message>
        <source>Hearth cannot save anything in its data folder, {folder}: {what} ({detail}).</source>
        <translation>Hearth kann nichts in seinem Datenordner {folder} speichern: {what} ({detail}).</translation>
    </message>
    <message>
        <source>Hearth cannot save anything in its data folder, {folder}: {what}.</source>
        <translation>Hearth kann nichts in seinem Datenordner {folder} speichern: {what}.</translation>
    </message>
    <message>
        <source>{fix}, or start Hearth with the environment variable {variable} set to a folder you can write to; then start Hearth again.</source>
        <translation>{fix} oder setzen Sie die Umgebungsvariable {variable} auf einen Ordner, in den Sie schreiben können; starten Sie Hearth dann erneut.</translation>
    </message>
    <message>
        <source>{what} {advice}</source>
        <translation>{what} {advice}</translation>
    </message>
    <message>
        <source>{model} has no chat template: it looks like a base model, which continues text rather than following instructions, so its replies may ramble or ignore what you ask. Its instruct version (often named “-it” or “-Instruct”) is made for chatting.</source>
        <translation>{model} hat keine Chat-Vorlage: Es sieht nach einem Basismodell aus, das Text fortsetzt, statt Anweisungen zu folgen; seine Antworten können daher abschweifen oder übergehen, worum Sie bitten. Seine Instruct-Version (oft „-it“ oder „-Instruct“ genannt) ist zum Chatten gemacht.</translation>
    </message>
    <message>
        <source>This model has no chat template: it looks like a base model, which continues text rather than following instructions, so its replies may ramble or ignore what you ask. Its instruct version (often named “-it” or “-Instruct”) is made for chatting.</source>
        <translation>Dieses Modell hat keine Chat-Vorlage: Es sieht nach einem Basismodell aus, das Text fortsetzt, statt Anweisungen zu folgen; seine Antworten können daher abschweifen oder übergehen, worum Sie bitten. Seine Instruct-Version (oft „-it“ oder „-Instruct“ genannt) ist zum Chatten gemacht.</translation>
    </message>
    <message>
        <source>{model} is named as a base model: it looks like a base model, which continues text rather than following instructions, so its replies may ramble or ignore what you ask. Its instruct version (often named “-it” or “-Instruct”) is made for chatting.</source>
        <translation>{model} ist als Basismodell benannt: Es sieht nach einem Basismodell aus, das Text fortsetzt, statt Anweisungen zu folgen; seine Antworten können daher abschweifen oder übergehen, worum Sie bitten. Seine Instruct-Version (oft „-it“ oder „-Instruct“ genannt) ist zum Chatten gemacht.</translation>
    </message>
    <message>
        <source>This model is named as a base model: it looks like a base model, which continues text rather than following instructions, so its replies may ramble or ignore what you ask. Its instruct version (often named “-it” or “-Instruct”) is made for chatting.</source>
        <translation>Dieses Modell ist als Basismodell benannt: Es sieht nach einem Basismodell aus, das Text fortsetzt, statt Anweisungen zu folgen; seine Antworten können daher abschweifen oder übergehen, worum Sie bitten. Seine Instruct-Version (oft „-it“ oder „-Instruct“ genannt) ist zum Chatten gemacht.</translation>
    </message>
    <message>
        <source>Context {used:,} / {size:,}</source>
        <translation>Kontext {used:,} / {size:,}</translation>
    </message>
    <message>
        <source>The context is full. From the next message on, the oldest turns are left out of what the model sees; they stay in this conversation. Start a new chat for a fresh context, or load the model with a larger context.</source>
        <translation>Der Kontext ist voll. Ab der nächsten Nachricht werden die ältesten Beiträge aus dem weggelassen, was das Modell sieht; in dieser Unterhaltung bleiben sie erhalten. Beginnen Sie einen neuen Chat für einen frischen Kontext, oder laden Sie das Modell mit einem größeren Kontext.</translation>
    </message>
    <message>
        <source>The context is {percent}% full. From the next message on, the oldest turns are left out of what the model sees; they stay in this conversation. Start a new chat for a fresh context, or load the model with a larger context.</source>
        <translation>Der Kontext ist zu {percent} % voll. Ab der nächsten Nachricht werden die ältesten Beiträge aus dem weggelassen, was das Modell sieht; in dieser Unterhaltung bleiben sie erhalten. Beginnen Sie einen neuen Chat für einen frischen Kontext, oder laden Sie das Modell mit einem größeren Kontext.</translation>
    </message>
    <message>
        <source>{rate:.1f} tokens/s · first token after {ms:,.0f} ms</source>
        <translation>{rate:.1f} Token/s · erstes Token nach {ms:,.0f} ms</translation>
    </message>
    <message>
        <source>{rate:.1f} tokens/s</source>
        <translation>{rate:.1f} Token/s</translation>
    </message>
    <message>
        <source>First token after {ms:,.0f} ms</source>
        <translation>Erstes Token nach {ms:,.0f} ms</translation>
    </message>
    <message>
        <source>The context is full: the oldest message was left out of what the model saw for this reply (it stays in the conversation).</source>
        <translation>Der Kontext ist voll: Die älteste Nachricht wurde bei dieser Antwort aus dem weggelassen, was das Modell sah (in der Unterhaltung bleibt sie erhalten).</translation>
    </message>
    <message numerus="yes">
        <source>The context is full: the %n oldest messages were left out of what the model saw for this reply (they stay in the conversation).</source>
        <translation>
            <numerusform>Der Kontext ist voll: %n Nachricht, die älteste, wurde bei dieser Antwort weggelassen (sie bleibt in der Unterhaltung).</numerusform>
            <numerusform>Der Kontext ist voll: Die %n ältesten Nachrichten wurden bei dieser Antwort weggelassen (sie bleiben in der Unterhaltung).</numerusform>
        </translation>
    </message>
    <message>
        <source>{tool} is not installed</source>
        <translation>{tool} ist nicht installiert</translation>
    </message>
    <message>
        <source>{tool} could not be started: {error}</source>
        <translation>{tool} konnte nicht gestartet werden: {error}</translation>
    </message>
    <message>
        <source>{tool} did not answer within {seconds:g} s</source>
        <translation>{tool} hat nicht innerhalb von {seconds:g} s geantwortet</translation>
    </message>
    <message>
        <source>{tool} failed: {error}</source>
        <translation>{tool} ist fehlgeschlagen: {error}</translation>
    </message>
    <message>
        <source>{tool} failed: exit status {status}</source>
        <translation>{tool} ist fehlgeschlagen: Exit-Status {status}</translation>
    </message>
    <message>
        <source>not asked: no AMD GPU in sysfs</source>
        <translation>nicht gefragt: keine AMD-GPU in sysfs</translation>
    </message>
    <message>
        <source>unreadable output: {error}</source>
        <translation>unlesbare Ausgabe: {error}</translation>
    </message>
    <message>
        <source>no {path} (no GPU driver loaded)</source>
        <translation>kein {path} (kein GPU-Treiber geladen)</translation>
    </message>
    <message>
        <source>no AMD GPU in {path}</source>
        <translation>keine AMD-GPU in {path}</translation>
    </message>
    <message>
        <source>{package} is not installed</source>
        <translation>{package} ist nicht installiert</translation>
    </message>
    <message>
        <source>Metal bindings failed to load: {error}</source>
        <translation>Die Metal-Anbindung ließ sich nicht laden: {error}</translation>
    </message>
    <message>
        <source>Metal device query failed: {error}</source>
        <translation>Die Abfrage der Metal-Geräte ist fehlgeschlagen: {error}</translation>
    </message>
    <message>
        <source>Metal reports no GPU</source>
        <translation>Metal meldet keine GPU</translation>
    </message>
    <message>
        <source>Intel Mac and {why}</source>
        <translation>Intel-Mac, und {why}</translation>
    </message>
    <message>
        <source>{why}; {key} unreadable</source>
        <translation>{why}; {key} nicht lesbar</translation>
    </message>
    <message>
        <source>estimated from sysctl ({why})</source>
        <translation>aus sysctl geschätzt ({why})</translation>
    </message>
    <message>
        <source>{tool} is Linux only</source>
        <translation>{tool} gibt es nur unter Linux</translation>
    </message>
    <message>
        <source>not a Mac</source>
        <translation>kein Mac</translation>
    </message>
    <message>
        <source>NVML is not available on macOS</source>
        <translation>NVML gibt es unter macOS nicht</translation>
    </message>
    <message>
        <source>skipped</source>
        <translation>übersprungen</translation>
    </message>
    <message>
        <source>did not answer within {seconds:g} s (driver hung?)</source>
        <translation>hat nicht innerhalb von {seconds:g} s geantwortet (Treiber hängt?)</translation>
    </message>
    <message>
        <source>failed: {error}</source>
        <translation>fehlgeschlagen: {error}</translation>
    </message>
    <message>
        <source>not asked: AMD detection did not finish</source>
        <translation>nicht gefragt: Die AMD-Erkennung wurde nicht fertig</translation>
    </message>
    <message>
        <source>heap sizes unknown ({why})</source>
        <translation>Heap-Größen unbekannt ({why})</translation>
    </message>
    <message>
        <source>heap sizes unknown (no time left)</source>
        <translation>Heap-Größen unbekannt (keine Zeit mehr)</translation>
    </message>
    <message>
        <source>{reason}; {note}</source>
        <translation>{reason}; {note}</translation>
    </message>
    <message>
        <source>NVML library not found: no NVIDIA driver is installed</source>
        <translation>NVML-Bibliothek nicht gefunden: Kein NVIDIA-Treiber ist installiert</translation>
    </message>
    <message>
        <source>the NVIDIA driver is installed but not running; restart the computer, and if that does not help check that the nvidia kernel module loads (Secure Boot can block it)</source>
        <translation>der NVIDIA-Treiber ist installiert, läuft aber nicht; starten Sie den Computer neu, und wenn das nicht hilft, prüfen Sie, ob das nvidia-Kernelmodul geladen wird (Secure Boot kann es blockieren)</translation>
    </message>
    <message>
        <source>the NVIDIA driver was updated but the old one is still loaded (NVML/driver version mismatch); restart the computer</source>
        <translation>der NVIDIA-Treiber wurde aktualisiert, aber der alte ist noch geladen (NVML- und Treiberversion passen nicht zusammen); starten Sie den Computer neu</translation>
    </message>
    <message>
        <source>no permission to query the NVIDIA driver (check {path} access)</source>
        <translation>keine Berechtigung, den NVIDIA-Treiber abzufragen (prüfen Sie den Zugriff auf {path})</translation>
    </message>
    <message>
        <source>the {package} package is missing ({error})</source>
        <translation>das Paket {package} fehlt ({error})</translation>
    </message>
    <message>
        <source>NVML could not start: {error}</source>
        <translation>NVML konnte nicht starten: {error}</translation>
    </message>
    <message>
        <source>NVML cannot count GPUs: {error}</source>
        <translation>NVML kann die GPUs nicht zählen: {error}</translation>
    </message>
    <message>
        <source>the NVIDIA driver is running but reports no GPU</source>
        <translation>der NVIDIA-Treiber läuft, meldet aber keine GPU</translation>
    </message>
    <message>
        <source>{tool} lists no device</source>
        <translation>{tool} listet kein Gerät auf</translation>
    </message>
    <message>
        <source>no heaps in {tool} output</source>
        <translation>keine Heaps in der Ausgabe von {tool}</translation>
    </message>
    <message>
        <source>Tiny and quick; runs on almost any computer. Good for trying Hearth out.</source>
        <translation>Klein und schnell; läuft auf fast jedem Computer. Gut, um Hearth auszuprobieren.</translation>
    </message>
    <message>
        <source>A small, capable all-rounder from Meta; fine on laptops without a GPU.</source>
        <translation>Ein kleiner, fähiger Allrounder von Meta; läuft gut auf Laptops ohne GPU.</translation>
    </message>
    <message>
        <source>Strong reasoning for its size; thinks before it answers.</source>
        <translation>Starkes Schlussfolgern für seine Größe; denkt nach, bevor es antwortet.</translation>
    </message>
    <message>
        <source>Google&apos;s small model; good writing and many languages.</source>
        <translation>Googles kleines Modell; schreibt gut und in vielen Sprachen.</translation>
    </message>
    <message>
        <source>The classic 8B assistant; wants about 6 GB of memory.</source>
        <translation>Der klassische 8B-Assistent; braucht etwa 6 GB Speicher.</translation>
    </message>
    <message>
        <source>A capable general model for a GPU with 8 GB or more.</source>
        <translation>Ein fähiges Allzweckmodell für eine GPU mit 8 GB oder mehr.</translation>
    </message>
    <message>
        <source>Long context and good at conversation; for a 12 GB GPU.</source>
        <translation>Langer Kontext und gut im Gespräch; für eine GPU mit 12 GB.</translation>
    </message>
    <message>
        <source>OpenAI&apos;s open-weight model; a mixture of experts that runs well even partly on the CPU.</source>
        <translation>Das Open-Weight-Modell von OpenAI; eine Mixture of Experts, die auch teilweise auf der CPU gut läuft.</translation>
    </message>
    <message>
        <source>A fast mixture of experts: 30B of knowledge at the speed of a 3B.</source>
        <translation>Eine schnelle Mixture of Experts: das Wissen von 30B bei der Geschwindigkeit von 3B.</translation>
    </message>
    <message>
        <source>Among the best models a single 24 GB GPU can hold.</source>
        <translation>Eines der besten Modelle, die eine einzelne GPU mit 24 GB fassen kann.</translation>
    </message>
    <message>
        <source>the only runtime installed</source>
        <translation>die einzige installierte Laufzeitumgebung</translation>
    </message>
    <message>
        <source>no better runtime passed its self-test</source>
        <translation>keine bessere Laufzeitumgebung hat ihren Selbsttest bestanden</translation>
    </message>
    <message>
        <source>your choice</source>
        <translation>Ihre Wahl</translation>
    </message>
    <message>
        <source>the best for Apple Silicon</source>
        <translation>die beste für Apple Silicon</translation>
    </message>
    <message>
        <source>the portable CPU build, tuned for this processor at run time</source>
        <translation>der portable CPU-Build, zur Laufzeit auf diesen Prozessor abgestimmt</translation>
    </message>
    <message>
        <source>Hearth cannot tell which program is running it, so it cannot set the model server to start at login.</source>
        <translation>Hearth kann nicht feststellen, welches Programm es ausführt, und kann den Modellserver daher nicht beim Anmelden starten lassen.</translation>
    </message>
    <message>
        <source>The command to start the model server is empty.</source>
        <translation>Der Befehl zum Starten des Modellservers ist leer.</translation>
    </message>
    <message>
        <source>The command to start the model server contains a control character ({arg}), which a start-at-login entry cannot hold.</source>
        <translation>Der Befehl zum Starten des Modellservers enthält ein Steuerzeichen ({arg}), das ein Autostart-Eintrag nicht aufnehmen kann.</translation>
    </message>
    <message>
        <source>The path {arg} is not valid text, which a start-at-login entry cannot hold: move Hearth to a folder with a plainer name.</source>
        <translation>Der Pfad {arg} ist kein gültiger Text, den ein Autostart-Eintrag aufnehmen kann: Verschieben Sie Hearth in einen Ordner mit einem einfacheren Namen.</translation>
    </message>
    <message>
        <source>The program {path} is not named by a full path, which a start-at-login entry needs.</source>
        <translation>Das Programm {path} ist nicht mit vollständigem Pfad angegeben, den ein Autostart-Eintrag braucht.</translation>
    </message>
    <message>
        <source>The command to start the model server contains a double quote ({arg}), which a Windows start-up entry cannot hold.</source>
        <translation>Der Befehl zum Starten des Modellservers enthält ein doppeltes Anführungszeichen ({arg}), das ein Windows-Autostart-Eintrag nicht aufnehmen kann.</translation>
    </message>
    <message>
        <source>Starting the model server at login is not supported on {platform}.</source>
        <translation>Den Modellserver beim Anmelden zu starten, wird auf {platform} nicht unterstützt.</translation>
    </message>
    <message>
        <source>Hearth cannot write {path}, so the model server cannot be set to start at login: {reason}.</source>
        <translation>Hearth kann {path} nicht schreiben, daher kann der Modellserver nicht beim Anmelden gestartet werden: {reason}.</translation>
    </message>
    <message>
        <source>Hearth cannot remove {path}, so the model server still starts at login: {reason}.</source>
        <translation>Hearth kann {path} nicht entfernen, daher startet der Modellserver weiterhin beim Anmelden: {reason}.</translation>
    </message>
    <message>
        <source>Let it unload when idle</source>
        <translation>Bei Leerlauf entladen lassen</translation>
    </message>
    <message>
        <source>Keep it loaded (pin)</source>
        <translation>Geladen halten (anheften)</translation>
    </message>
    <message>
        <source>Unload {model}</source>
        <translation>{model} entladen</translation>
    </message>
    <message>
        <source>loaded in the chat here</source>
        <translation>hier im Chat geladen</translation>
    </message>
    <message>
        <source>loading</source>
        <translation>wird geladen</translation>
    </message>
    <message>
        <source>unloading</source>
        <translation>wird entladen</translation>
    </message>
    <message numerus="yes">
        <source>answering %n request(s)</source>
        <translation>
            <numerusform>beantwortet %n Anfrage</numerusform>
            <numerusform>beantwortet %n Anfragen</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>idle %n min</source>
        <translation>
            <numerusform>%n Min. untätig</numerusform>
            <numerusform>%n Min. untätig</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>idle %n s</source>
        <translation>
            <numerusform>%n s untätig</numerusform>
            <numerusform>%n s untätig</numerusform>
        </translation>
    </message>
    <message>
        <source>Start the model server</source>
        <translation>Modellserver starten</translation>
    </message>
    <message>
        <source>Serve every model of your library to other programs on this computer; it stops when Hearth closes.</source>
        <translation>Stellt jedes Modell Ihrer Bibliothek anderen Programmen auf diesem Computer bereit; er stoppt, wenn Hearth geschlossen wird.</translation>
    </message>
    <message>
        <source>Model server</source>
        <translation>Modellserver</translation>
    </message>
    <message>
        <source>Asking the model server…</source>
        <translation>Frage den Modellserver …</translation>
    </message>
    <message>
        <source>The model server is not running. Other programs reach your models through it (Settings &gt; Sharing).</source>
        <translation>Der Modellserver läuft nicht. Andere Programme erreichen Ihre Modelle über ihn (Einstellungen &gt; Freigabe).</translation>
    </message>
    <message>
        <source>Running at {url}: no model loaded. A program that asks for a model loads it.</source>
        <translation>Läuft unter {url}: kein Modell geladen. Ein Programm, das nach einem Modell fragt, lädt es.</translation>
    </message>
    <message numerus="yes">
        <source>Running at {url}: %n model(s) loaded.</source>
        <translation>
            <numerusform>Läuft unter {url}: %n Modell geladen.</numerusform>
            <numerusform>Läuft unter {url}: %n Modelle geladen.</numerusform>
        </translation>
    </message>
    <message>
        <source>Other programs (coding agents such as Claude Code and Codex, editors, Open WebUI) can use every model of your library through Hearth&apos;s model server: each model loads when a program asks for it and unloads when idle. Run &apos;hearth serve&apos;, or let it start when you log in. It listens at the port above, with the same key.</source>
        <translation>Andere Programme (Coding-Agenten wie Claude Code und Codex, Editoren, Open WebUI) können über Hearths Modellserver jedes Modell Ihrer Bibliothek nutzen: Jedes Modell wird geladen, wenn ein Programm danach fragt, und entladen, wenn es nicht gebraucht wird. Starten Sie &apos;hearth serve&apos; oder lassen Sie ihn beim Anmelden starten. Er lauscht am Port oben, mit demselben Schlüssel.</translation>
    </message>
    <message>
        <source>Run the model server while Hearth is open</source>
        <translation>Den Modellserver ausführen, solange Hearth geöffnet ist</translation>
    </message>
    <message>
        <source>Hearth starts it when none runs yet, and stops the one it started when it closes. The model you load in the chat is served through it too.</source>
        <translation>Hearth startet ihn, wenn noch keiner läuft, und beendet den selbst gestarteten beim Schließen. Das Modell, das Sie im Chat laden, wird ebenfalls über ihn bereitgestellt.</translation>
    </message>
    <message>
        <source>Start the model server when I log in</source>
        <translation>Modellserver beim Anmelden starten</translation>
    </message>
    <message>
        <source>Kind of tool</source>
        <translation>Art des Werkzeugs</translation>
    </message>
    <message>
        <source>OpenAI-compatible tools (Codex, scripts)</source>
        <translation>OpenAI-kompatible Werkzeuge (Codex, Skripte)</translation>
    </message>
    <message>
        <source>Anthropic tools (Claude Code)</source>
        <translation>Anthropic-Werkzeuge (Claude Code)</translation>
    </message>
    <message>
        <source>Ollama clients</source>
        <translation>Ollama-Clients</translation>
    </message>
    <message>
        <source>Lines for a terminal</source>
        <translation>Zeilen für ein Terminal</translation>
    </message>
    <message>
        <source>Copy the lines</source>
        <translation>Zeilen kopieren</translation>
    </message>
    <message>
        <source>Point a tool at it</source>
        <translation>Ein Werkzeug darauf richten</translation>
    </message>
    <message>
        <source>Paste these lines into the terminal the tool starts from.</source>
        <translation>Fügen Sie diese Zeilen in das Terminal ein, aus dem das Werkzeug startet.</translation>
    </message>
    <message>
        <source>The model server at {url} did not answer ({error}).</source>
        <translation>Der Modellserver unter {url} hat nicht geantwortet ({error}).</translation>
    </message>
    <message>
        <source>Something answers at {url} but takes another key: another program may use this port. Choose another port in Settings &gt; Sharing.</source>
        <translation>Unter {url} antwortet etwas, das einen anderen Schlüssel erwartet: Vielleicht nutzt ein anderes Programm diesen Port. Wählen Sie einen anderen Port unter Einstellungen &gt; Freigabe.</translation>
    </message>
    <message>
        <source>The model server at {url} gave an answer Hearth does not understand.</source>
        <translation>Der Modellserver unter {url} gab eine Antwort, die Hearth nicht versteht.</translation>
    </message>
    <message>
        <source>The model server refused: {reason}</source>
        <translation>Der Modellserver hat abgelehnt: {reason}</translation>
    </message>
    <message>
        <source>The model server could not be started: {reason}.</source>
        <translation>Der Modellserver konnte nicht gestartet werden: {reason}.</translation>
    </message>
    <message>
        <source>The model server stopped as it started: another program may use its port (Settings &gt; Sharing), or see the log.</source>
        <translation>Der Modellserver hat sich beim Start beendet: Vielleicht nutzt ein anderes Programm seinen Port (Einstellungen &gt; Freigabe), oder sehen Sie im Protokoll nach.</translation>
    </message>
    <message>
        <source>{name}: Hearth reads text, Markdown, code, PDF, DOCX and HTML files, not this kind of file.</source>
        <translation>{name}: Hearth liest Text-, Markdown-, Code-, PDF-, DOCX- und HTML-Dateien, nicht diese Art von Datei.</translation>
    </message>
    <message>
        <source>{name} cannot be read: {reason}.</source>
        <translation>{name} kann nicht gelesen werden: {reason}.</translation>
    </message>
    <message>
        <source>{name} is {size} MB; Hearth takes documents of up to {limit} MB. Split it, or attach the part you need.</source>
        <translation>{name} ist {size} MB groß; Hearth nimmt Dokumente bis {limit} MB. Teilen Sie es auf, oder hängen Sie den Teil an, den Sie brauchen.</translation>
    </message>
    <message>
        <source>{name} has no text in it.</source>
        <translation>{name} enthält keinen Text.</translation>
    </message>
    <message>
        <source>{name} is not a text file (its bytes are binary), though its name says it is.</source>
        <translation>{name} ist keine Textdatei (ihr Inhalt ist binär), auch wenn der Name das sagt.</translation>
    </message>
    <message>
        <source>{name} holds more text than Hearth reads from one document.</source>
        <translation>{name} enthält mehr Text, als Hearth aus einem Dokument liest.</translation>
    </message>
    <message>
        <source>{name} is not a readable Word document (DOCX): it may be damaged, or an older .doc renamed.</source>
        <translation>{name} ist kein lesbares Word-Dokument (DOCX): Es ist vielleicht beschädigt oder eine umbenannte ältere .doc-Datei.</translation>
    </message>
    <message>
        <source>{name} is a password-protected PDF: open it in a PDF reader, save a copy without the password, and attach that.</source>
        <translation>{name} ist ein passwortgeschütztes PDF: Öffnen Sie es in einem PDF-Programm, speichern Sie eine Kopie ohne Passwort und hängen Sie diese an.</translation>
    </message>
    <message>
        <source>{name} is a damaged PDF that cannot be read ({reason}).</source>
        <translation>{name} ist ein beschädigtes PDF, das nicht gelesen werden kann ({reason}).</translation>
    </message>
    <message>
        <source>{name} has no text layer (its {count} pages are images, as a scan&apos;s are). Hearth does not read text in images (no OCR): use a PDF with text, or a text file.</source>
        <translation>{name} hat keine Textebene (seine {count} Seiten sind Bilder, wie bei einem Scan). Hearth liest keinen Text in Bildern (keine Texterkennung): Verwenden Sie ein PDF mit Text oder eine Textdatei.</translation>
    </message>
    <message>
        <source>{folder} holds more than {count} documents: attach a smaller folder, or the files you need.</source>
        <translation>{folder} enthält mehr als {count} Dokumente: Hängen Sie einen kleineren Ordner an oder die Dateien, die Sie brauchen.</translation>
    </message>
    <message>
        <source>None of the attached files has text Hearth can read.</source>
        <translation>Keine der angehängten Dateien enthält Text, den Hearth lesen kann.</translation>
    </message>
    <message>
        <source>This conversation leaves no room for documents in the model&apos;s context: start a new conversation, or load the model with a larger context.</source>
        <translation>Dieses Gespräch lässt im Kontext des Modells keinen Platz für Dokumente: Beginnen Sie ein neues Gespräch, oder laden Sie das Modell mit einem größeren Kontext.</translation>
    </message>
    <message>
        <source>Not even one passage of the documents fits the room this conversation leaves: start a new conversation, or load the model with a larger context.</source>
        <translation>Nicht einmal ein Abschnitt der Dokumente passt in den Platz, den dieses Gespräch lässt: Beginnen Sie ein neues Gespräch, oder laden Sie das Modell mit einem größeren Kontext.</translation>
    </message>
    <message>
        <source>Attach files</source>
        <translation>Dateien anhängen</translation>
    </message>
    <message>
        <source>Documents and images ({kinds})</source>
        <translation>Dokumente und Bilder ({kinds})</translation>
    </message>
    <message>
        <source>At most {count} documents go with one message.</source>
        <translation>Höchstens {count} Dokumente passen zu einer Nachricht.</translation>
    </message>
    <message>
        <source>At most {count} images go with one message.</source>
        <translation>Höchstens {count} Bilder passen zu einer Nachricht.</translation>
    </message>
    <message>
        <source>Pasted image</source>
        <translation>Eingefügtes Bild</translation>
    </message>
    <message>
        <source>{name} · {width} × {height} pixels, as the model gets it</source>
        <translation>{name} · {width} × {height} Pixel, so wie das Modell es erhält</translation>
    </message>
    <message>
        <source>Remove {name}</source>
        <translation>{name} entfernen</translation>
    </message>
    <message>
        <source>{name} is not a vision projector (an mmproj file with an image encoder).</source>
        <translation>{name} ist kein Bild-Projektor (eine mmproj-Datei mit Bild-Encoder).</translation>
    </message>
    <message>
        <source>{name} is not an image Hearth can read ({reason}).</source>
        <translation>{name} ist kein Bild, das Hearth lesen kann ({reason}).</translation>
    </message>
    <message>
        <source>unknown format</source>
        <translation>unbekanntes Format</translation>
    </message>
    <message>
        <source>{name} declares {width} × {height} pixels, far more than any photo: it is refused before it is opened. Scale it down first.</source>
        <translation>{name} gibt {width} × {height} Pixel an, weit mehr als jedes Foto: Es wird abgelehnt, bevor es geöffnet wird. Verkleinern Sie es zuerst.</translation>
    </message>
    <message>
        <source>{name} could not be opened as an image: {reason}.</source>
        <translation>{name} konnte nicht als Bild geöffnet werden: {reason}.</translation>
    </message>
    <message>
        <source>{name} could not be converted for the model.</source>
        <translation>{name} konnte nicht für das Modell umgewandelt werden.</translation>
    </message>
    <message>
        <source>The embedding model {name} could not be started (exit code {code}).</source>
        <translation>Das Embedding-Modell {name} konnte nicht gestartet werden (Exit-Code {code}).</translation>
    </message>
    <message>
        <source>The embedding model {name} could not be loaded: {reason}</source>
        <translation>Das Embedding-Modell {name} konnte nicht geladen werden: {reason}</translation>
    </message>
    <message>
        <source>The embedding model {name} did not get ready.</source>
        <translation>Das Embedding-Modell {name} wurde nicht bereit.</translation>
    </message>
    <message>
        <source>Vision projector for {name}</source>
        <translation>Bild-Projektor für {name}</translation>
    </message>
    <message>
        <source>Vision projectors (*.gguf)</source>
        <translation>Bild-Projektoren (*.gguf)</translation>
    </message>
    <message>
        <source>{projector} loads with {model} from its next load: the model can see images.</source>
        <translation>{projector} wird ab dem nächsten Laden mit {model} geladen: Das Modell kann Bilder sehen.</translation>
    </message>
    <message>
        <source>Stopped after {count} rounds of tool calls, the most one reply may make (Settings → Tools).</source>
        <translation>Nach {count} Runden von Werkzeugaufrufen angehalten, so viele darf eine Antwort höchstens machen (Einstellungen → Werkzeuge).</translation>
    </message>
    <message>
        <source>The model tried to call tools this conversation does not offer; its calls were ignored.</source>
        <translation>Das Modell wollte Werkzeuge aufrufen, die diese Unterhaltung nicht anbietet; die Aufrufe wurden ignoriert.</translation>
    </message>
    <message>
        <source>A tool call waits for your answer</source>
        <translation>Ein Werkzeugaufruf wartet auf Ihre Antwort</translation>
    </message>
    <message>
        <source>The call&apos;s arguments</source>
        <translation>Die Argumente des Aufrufs</translation>
    </message>
    <message>
        <source>Allow once</source>
        <translation>Einmal erlauben</translation>
    </message>
    <message>
        <source>Allow in this conversation</source>
        <translation>In dieser Unterhaltung erlauben</translation>
    </message>
    <message>
        <source>Always allow</source>
        <translation>Immer erlauben</translation>
    </message>
    <message>
        <source>Run this tool without asking from now on, as long as its server describes it as it does now</source>
        <translation>Dieses Werkzeug ab jetzt ohne Nachfrage ausführen, solange sein Server es so beschreibt wie jetzt</translation>
    </message>
    <message>
        <source>Deny</source>
        <translation>Ablehnen</translation>
    </message>
    <message>
        <source>Do not run it; the model is told you did not allow it</source>
        <translation>Nicht ausführen; dem Modell wird gesagt, dass Sie es nicht erlaubt haben</translation>
    </message>
    <message>
        <source>built into Hearth</source>
        <translation>in Hearth eingebaut</translation>
    </message>
    <message>
        <source>from the server {server}</source>
        <translation>vom Server {server}</translation>
    </message>
    <message>
        <source>The model wants to run the tool {name} ({where}).</source>
        <translation>Das Modell möchte das Werkzeug {name} ausführen ({where}).</translation>
    </message>
    <message>
        <source>How the tool describes itself: {text}</source>
        <translation>So beschreibt sich das Werkzeug selbst: {text}</translation>
    </message>
    <message>
        <source>The tool gives no description.</source>
        <translation>Das Werkzeug gibt keine Beschreibung.</translation>
    </message>
    <message>
        <source>The file is larger than 1 MiB; an mcpServers file is much smaller. Choose the right file.</source>
        <translation>Die Datei ist größer als 1 MiB; eine mcpServers-Datei ist viel kleiner. Wählen Sie die richtige Datei.</translation>
    </message>
    <message>
        <source>The file is not JSON ({error}).</source>
        <translation>Die Datei ist kein JSON ({error}).</translation>
    </message>
    <message>
        <source>The file has no “mcpServers” object, so it is not an MCP servers file (Claude Desktop&apos;s claude_desktop_config.json or LM Studio&apos;s mcp.json are).</source>
        <translation>Die Datei hat kein „mcpServers“-Objekt und ist daher keine MCP-Server-Datei (claude_desktop_config.json von Claude Desktop oder mcp.json von LM Studio sind es).</translation>
    </message>
    <message>
        <source>List files in the chosen folder</source>
        <translation>Dateien im gewählten Ordner auflisten</translation>
    </message>
    <message>
        <source>Read text files in the chosen folder</source>
        <translation>Textdateien im gewählten Ordner lesen</translation>
    </message>
    <message>
        <source>Calculator</source>
        <translation>Rechner</translation>
    </message>
    <message>
        <source>Current date and time</source>
        <translation>Aktuelles Datum und Uhrzeit</translation>
    </message>
    <message>
        <source>Built-in tools</source>
        <translation>Eingebaute Werkzeuge</translation>
    </message>
    <message>
        <source>Models that know tools may call these during a reply; each call is shown and, until you decide otherwise, asked about first. None of them reaches the network or runs a command.</source>
        <translation>Modelle, die Werkzeuge kennen, dürfen diese während einer Antwort aufrufen; jeder Aufruf wird angezeigt und, bis Sie anders entscheiden, vorher erfragt. Keines davon greift auf das Netz zu oder führt einen Befehl aus.</translation>
    </message>
    <message>
        <source>Choose folder…</source>
        <translation>Ordner wählen…</translation>
    </message>
    <message>
        <source>Choose the folder the file tools read</source>
        <translation>Den Ordner wählen, den die Datei-Werkzeuge lesen</translation>
    </message>
    <message>
        <source>Folder for the file tools</source>
        <translation>Ordner für die Datei-Werkzeuge</translation>
    </message>
    <message>
        <source>Tool rounds in one reply, at most</source>
        <translation>Werkzeugrunden pro Antwort, höchstens</translation>
    </message>
    <message>
        <source>A model that keeps calling tools is stopped after this many rounds.</source>
        <translation>Ein Modell, das immer weiter Werkzeuge aufruft, wird nach so vielen Runden angehalten.</translation>
    </message>
    <message>
        <source>Time limit of one call</source>
        <translation>Zeitlimit eines Aufrufs</translation>
    </message>
    <message>
        <source>A call that takes longer is cancelled and the model is told.</source>
        <translation>Ein Aufruf, der länger dauert, wird abgebrochen, und das Modell erfährt es.</translation>
    </message>
    <message>
        <source>Ask again about every tool</source>
        <translation>Bei jedem Werkzeug wieder fragen</translation>
    </message>
    <message>
        <source>Standing decisions</source>
        <translation>Feste Entscheidungen</translation>
    </message>
    <message>
        <source>None chosen: the file tools have nothing to read until you choose one.</source>
        <translation>Keiner gewählt: Die Datei-Werkzeuge haben nichts zu lesen, bis Sie einen wählen.</translation>
    </message>
    <message numerus="yes">
        <source>%n tool(s) allowed or denied without asking.</source>
        <translation>
            <numerusform>%n Werkzeug ohne Nachfrage erlaubt oder abgelehnt.</numerusform>
            <numerusform>%n Werkzeuge ohne Nachfrage erlaubt oder abgelehnt.</numerusform>
        </translation>
    </message>
    <message>
        <source>Ask first</source>
        <translation>Zuerst fragen</translation>
    </message>
    <message>
        <source>Allow without asking</source>
        <translation>Ohne Nachfrage erlauben</translation>
    </message>
    <message>
        <source>Deny without asking</source>
        <translation>Ohne Nachfrage ablehnen</translation>
    </message>
    <message>
        <source>What to do when a model calls {tool}</source>
        <translation>Was geschieht, wenn ein Modell {tool} aufruft</translation>
    </message>
    <message>
        <source>The folder the file tools may read</source>
        <translation>Der Ordner, den die Datei-Werkzeuge lesen dürfen</translation>
    </message>
</context>
<context>
    <name>QPlatformTheme</name>
    <message>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
</context>
</TS>
