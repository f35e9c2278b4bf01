import type { FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Loading } from './ui.tsx';

/** A screen in its own chunk: fetched the first time it is shown, kept afterwards. */
export function lazy<P extends object>(load: () => Promise<FunctionComponent<P>>, what: string): FunctionComponent<P> {
  let loaded: FunctionComponent<P> | undefined;
  let pending: Promise<FunctionComponent<P>> | undefined;
  return (props: P) => {
    const [C, setC] = useState<FunctionComponent<P> | undefined>(() => loaded);
    const [err, setErr] = useState<Error | null>(null);
    useEffect(() => {
      if (loaded) return;
      (pending ??= load()).then((c) => setC(() => (loaded = c)), setErr);
    }, []);
    if (err)
      return (
        <p class="error" role="alert">
          Could not load the {what} screen ({err.message}). Reload the page: a newer version may have been deployed.
        </p>
      );
    return C ? <C {...props} /> : <Loading what={what} />;
  };
}
